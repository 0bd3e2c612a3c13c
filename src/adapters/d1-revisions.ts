/**
 * The D1 adapter for revisions, reviews and the cron cursor (docs/api.md Revision and Review).
 * A revision row keeps its status columns (status, applied_at, approved_by, approved_key, reason,
 * applied_version) as columns, so they can be updated under a status guard, and everything else of
 * the `Revision` schema as one JSON `body`. `before_row` is the row's learned state before apply
 * (written by apply, read by undo). Reads are by primary key or on the (agent, …) indexes.
 */
import type {
  AgentDue,
  NewRevision,
  ReviewRecord,
  RevisionBody,
  RevisionRecord,
  RevisionStore,
  RevisionUpdate,
} from '../core/ports.ts';
import type { Revision } from '../schemas.ts';
import { firstRow } from './d1-rows.ts';

export type { NewRevision };

type RevisionStatus = Revision['status'];

/** Revisions listed at most per request (docs/api.md has no paging; a review adds at most `max_tools`). */
export const MAX_LISTED_REVISIONS = 1000;

/**
 * The revision columns a list reads: all but `before_row` (read as NULL), the row undo restores,
 * its vector as JSON (~10 KB): a list never shows it, and every review lists the applied
 * revisions, so it was most of the ~15 MB a review of an agent with 1,000 of them read.
 */
const LISTED_COLUMNS =
  'revision_id, agent, tool, status, created_at, applied_at, approved_by, approved_key, reason, body, NULL AS before_row, applied_version, review_id, undone_at, undone_by, undone_key';

/** D1-backed revisions and reviews. Strongly consistent (one primary); multi-row writes are one batch. */
export function createD1Revisions(db: D1Database): RevisionStore<D1PreparedStatement> {
  return {
    /** The INSERT of one new `proposed` revision, for a caller's batch. */
    insertRevisionStatement(agent: string, rev: NewRevision, reviewId: string | null): D1PreparedStatement {
      return db
        .prepare(
          `INSERT INTO revisions (revision_id, agent, tool, status, created_at, body, review_id)
           VALUES (?1, ?2, ?3, 'proposed', ?4, ?5, ?6)`,
        )
        .bind(rev.revision_id, agent, rev.tool, rev.created_at, JSON.stringify(bodyOf(rev)), reviewId);
    },

    /** Stores new `proposed` revisions in one atomic batch. */
    async insertRevisions(agent: string, revisions: readonly NewRevision[], reviewId: string | null): Promise<void> {
      if (revisions.length === 0) return;
      await db.batch(revisions.map((r) => this.insertRevisionStatement(agent, r, reviewId)));
    },

    /** One revision of an agent in the API shape, or null (another agent's id is not found either). */
    async getRevision(agent: string, id: string): Promise<Revision | null> {
      return (await this.getRevisionRecord(agent, id))?.revision ?? null;
    },

    /** One revision with its stored extras (before_row for undo). */
    async getRevisionRecord(agent: string, id: string): Promise<RevisionRecord | null> {
      return firstRow(
        db,
        'SELECT * FROM revisions WHERE revision_id = ?1 AND agent = ?2',
        [id, agent],
        toRevisionRecord,
      );
    },

    /** An agent's revisions, newest first (ties: the later insert first), optionally by tool and status. */
    async listRevisions(
      agent: string,
      filter: { tool?: string | undefined; status?: RevisionStatus | undefined; limit?: number } = {},
    ): Promise<Revision[]> {
      return (await this.pageRevisions(agent, filter, null)).revisions;
    },

    /**
     * One page of an agent's revisions, newest first, after the position `after` (the created_at and
     * rowid of the previous page's last revision); `next` is this page's last position when more follow.
     */
    async pageRevisions(
      agent: string,
      filter: { tool?: string | undefined; status?: RevisionStatus | undefined; limit?: number },
      after: [string, number] | null,
    ): Promise<{ revisions: Revision[]; next: [string, number] | null }> {
      const limit = Math.min(filter.limit ?? MAX_LISTED_REVISIONS, MAX_LISTED_REVISIONS);
      const { results } = await db
        .prepare(
          `SELECT ${LISTED_COLUMNS}, rowid AS position FROM revisions
           WHERE agent = ?1 AND (?2 IS NULL OR tool = ?2) AND (?3 IS NULL OR status = ?3)
             AND (?4 IS NULL OR (created_at, rowid) < (?4, ?5))
           ORDER BY created_at DESC, rowid DESC LIMIT ?6`,
        )
        .bind(agent, filter.tool ?? null, filter.status ?? null, after?.[0] ?? null, after?.[1] ?? 0, limit + 1)
        .all<RevisionRow & { position: number }>();
      const page = results.slice(0, limit);
      const last = page.at(-1);
      return {
        revisions: page.map((r) => toRevisionRecord(r).revision),
        next: results.length > limit && last ? [last.created_at, last.position] : null,
      };
    },

    /**
     * tool → the id of its newest revision of lines waiting (`proposed`): such a tool is not reviewed
     * again (docs/learning.md). A memory revision waiting holds nothing back: the lines a review
     * proposes and the wordings memory holds are checked apart.
     */
    async waitingRevisions(agent: string): Promise<Map<string, string>> {
      // On revisions_agent_status (0002); the newest per tool is picked here, not by an ORDER BY that would leave that index.
      const { results } = await db
        .prepare(
          `SELECT tool, revision_id, created_at FROM revisions
           WHERE agent = ?1 AND status = 'proposed' AND (body ->> '$.kind') IS NOT 'memory'`,
        )
        .bind(agent)
        .all<{ tool: string; revision_id: string; created_at: string }>();
      const newest = new Map<string, { revision_id: string; created_at: string }>();
      for (const r of results) {
        const seen = newest.get(r.tool);
        if (!seen || r.created_at > seen.created_at) newest.set(r.tool, r);
      }
      return new Map([...newest].map(([tool, r]) => [tool, r.revision_id]));
    },

    /**
     * The UPDATE of a revision's status columns, guarded by the status it must have now: run it in a
     * batch and check `meta.changes` (0 = someone else changed it first, or it does not exist).
     */
    async updateRevisionStatement(
      agent: string,
      id: string,
      expected: RevisionStatus,
      update: RevisionUpdate,
    ): Promise<D1PreparedStatement | null> {
      const current = await this.getRevisionRecord(agent, id);
      if (!current) return null;
      const body = { ...bodyOf(current.revision), ...update.body };
      const keep = <T>(next: T | undefined, prev: T): T => (next === undefined ? prev : next);
      const r = current.revision;
      return db
        .prepare(
          `UPDATE revisions SET status = ?4, applied_at = ?5, approved_by = ?6, approved_key = ?7, reason = ?8,
             before_row = ?9, applied_version = ?10, body = ?11, undone_at = ?12, undone_by = ?13, undone_key = ?14
           WHERE revision_id = ?1 AND agent = ?2 AND status = ?3`,
        )
        .bind(
          id,
          agent,
          expected,
          update.status,
          keep(update.applied_at, r.applied_at),
          keep(update.approved_by, r.approved_by),
          keep(update.approved_key, current.approved_key),
          keep(update.reason, r.dismiss_reason),
          keep(update.before_row, current.before_row),
          keep(update.applied_version, r.applied_version),
          JSON.stringify(body),
          keep(update.undone_at, r.undone_at),
          keep(update.undone_by, r.undone_by),
          keep(update.undone_key, current.undone_key),
        );
    },

    /** The INSERT of a review's record (its summary: counts, skips, failures), for a caller's batch. */
    /** Runs statements this adapter built (revisions, reviews, review marks) in one atomic batch. */
    async commit(statements: readonly D1PreparedStatement[]): Promise<void> {
      await db.batch([...statements]);
    },

    insertReviewStatement(agent: string, review: ReviewRecord): D1PreparedStatement {
      return db
        .prepare('INSERT INTO reviews (review_id, agent, created_at, trigger, summary) VALUES (?1, ?2, ?3, ?4, ?5)')
        .bind(review.review_id, agent, review.created_at, review.trigger, JSON.stringify(review.summary));
    },

    /** Moves a tool's review mark forward to `seq` (never back): its calls up to `seq` have been read. */
    markToolReviewed: (agent: string, tool: string, seq: number) =>
      db
        .prepare('UPDATE tools SET reviewed_seq = MAX(reviewed_seq, ?3) WHERE agent = ?1 AND name = ?2')
        .bind(agent, tool, seq),

    /** Records a finished review on the agent row (docs/learning.md "calls since its last review"). */
    markAgentReviewed: (agent: string, now: string, seq: number) =>
      db
        .prepare('UPDATE agents SET last_review_at = ?2, last_review_seq = MAX(last_review_seq, ?3) WHERE agent = ?1')
        .bind(agent, now, seq),

    /**
     * Agents after `cursor` (by id) with calls since their last review, at most `limit`, with what the
     * cron needs to decide whether each is due. `last_call_seq` is the newest call seq of the agent's
     * log (src/services/calls.ts moves it after each write), so the scan never reaches into the logs.
     */
    async agentsWithNewCalls(cursor: string, limit: number): Promise<AgentDue[]> {
      const { results } = await db
        .prepare(
          `SELECT agent, settings, last_review_at, last_review_seq, last_call_seq AS last_seq FROM agents
           WHERE agent > ?1 AND last_call_seq > last_review_seq ORDER BY agent LIMIT ?2`,
        )
        .bind(cursor, limit)
        .all<AgentDueRow>();
      return results.map((r) => ({
        agent: r.agent,
        settings: JSON.parse(r.settings) as Record<string, unknown>,
        last_review_at: r.last_review_at,
        last_review_seq: r.last_review_seq,
        last_seq: r.last_seq,
      }));
    },

    /**
     * Notes a write of `added` new calls to an agent's log, whose newest call seq is then `lastSeq`
     * (the mark only moves forward).
     */
    async noteCalls(agent: string, lastSeq: number, added: number): Promise<void> {
      await db
        .prepare(
          'UPDATE agents SET last_call_seq = MAX(last_call_seq, ?2), calls_logged = calls_logged + ?3 WHERE agent = ?1',
        )
        .bind(agent, lastSeq, added)
        .run();
    },

    /** Notes that retention removed `removed` calls from an agent's log. */
    async noteCallsPruned(agent: string, removed: number): Promise<void> {
      await db
        .prepare('UPDATE agents SET calls_logged = MAX(0, calls_logged - ?2) WHERE agent = ?1')
        .bind(agent, removed)
        .run();
    },

    /** Where the last cron tick stopped ('' = from the start). */
    async getCronCursor(): Promise<string> {
      const row = await db.prepare('SELECT cursor FROM cron_state WHERE id = 1').first<{ cursor: string }>();
      return row?.cursor ?? '';
    },

    async setCronCursor(cursor: string, now: string): Promise<void> {
      await db
        .prepare(
          `INSERT INTO cron_state (id, cursor, updated_at) VALUES (1, ?1, ?2)
           ON CONFLICT (id) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
        )
        .bind(cursor, now)
        .run();
    },
  };
}

interface AgentDueRow {
  agent: string;
  settings: string;
  last_review_at: string | null;
  last_review_seq: number;
  last_seq: number;
}

export interface RevisionRow {
  revision_id: string;
  agent: string;
  tool: string;
  status: string;
  created_at: string;
  applied_at: string | null;
  approved_by: string | null;
  approved_key: string | null;
  reason: string | null;
  body: string;
  before_row: string | null;
  applied_version: number | null;
  review_id: string | null;
  undone_at: string | null;
  undone_by: string | null;
  undone_key: string | null;
}

/** The part of a revision its `body` column keeps. */
export function bodyOf(r: RevisionBody): RevisionBody {
  return {
    notes_added: r.notes_added,
    queries_added: r.queries_added,
    avoid_added: r.avoid_added,
    call_example: r.call_example,
    queries_withdrawn: r.queries_withdrawn,
    displaced: r.displaced,
    queries_displaced: r.queries_displaced,
    refused: r.refused,
    evidence: r.evidence,
    ranks: r.ranks,
    base_version: r.base_version,
    ...optionalParts(r),
  };
}

/** The parts a revision's body holds only when they say something: kept on write, read back alike. */
function optionalParts(
  r: Partial<RevisionBody>,
): Pick<RevisionBody, 'held' | 'proposed' | 'edited_by' | 'kind' | 'memory'> {
  return {
    ...(r.held?.length ? { held: r.held } : {}),
    ...(r.proposed ? { proposed: r.proposed } : {}),
    ...(r.edited_by !== undefined ? { edited_by: r.edited_by } : {}),
    ...(r.kind ? { kind: r.kind } : {}),
    ...(r.memory ? { memory: r.memory } : {}),
  };
}

const STATUSES: readonly string[] = ['proposed', 'applied', 'dismissed', 'undone'];

/** Maps a stored row to the `Revision` schema (missing body fields read as empty). */
export function toRevisionRecord(row: RevisionRow): RevisionRecord {
  const body = JSON.parse(row.body) as Partial<RevisionBody>;
  const revision: Revision = {
    revision_id: row.revision_id,
    tool: row.tool,
    status: STATUSES.includes(row.status) ? (row.status as RevisionStatus) : 'proposed',
    created_at: row.created_at,
    applied_at: row.applied_at,
    approved_by: row.approved_by,
    notes_added: body.notes_added ?? [],
    queries_added: body.queries_added ?? [],
    avoid_added: body.avoid_added ?? [],
    call_example: body.call_example ?? null,
    queries_withdrawn: body.queries_withdrawn ?? [],
    displaced: body.displaced ?? [],
    queries_displaced: body.queries_displaced ?? [],
    refused: body.refused ?? [],
    evidence: body.evidence ?? [],
    ranks: body.ranks ?? [],
    base_version: body.base_version ?? 0,
    applied_version: row.applied_version,
    dismiss_reason: row.reason,
    undone_at: row.undone_at,
    undone_by: row.undone_by,
    ...optionalParts(body),
  };
  return {
    revision,
    before_row: row.before_row,
    approved_key: row.approved_key,
    undone_key: row.undone_key,
    review_id: row.review_id,
  };
}
