/**
 * The bounded log reads of a tool-learning review (docs/learning.md "it reads at most max_calls_per_tool
 * recent calls per tool"), in the agent's log database (src/adapters/log-db.ts). Every statement is
 * an index seek or a short index range with a LIMIT, driven by a list of names or ids passed as one
 * JSON parameter (`json_each`: a statement binds at most 100 parameters), so a review costs the
 * same with 1,000 or 100,000 calls in the log.
 * test/adapters/review-log.test.ts checks each plan with EXPLAIN QUERY PLAN.
 *
 * Indexes used: calls (agent, tool, seq), (agent, turn_id), (agent, conversation_id, seq);
 * turns (agent, turn_id), (agent, conversation_id, seq), (agent, json_extract(offered,'$[0].name'), seq)
 * (src/adapters/agent-log-schema.ts). `+t.name` strips any affinity so the expression index applies.
 */
import type { ReviewLogReads } from '../core/ports.ts';
import type { ToolActivity } from '../core/review-selection.ts';
import type { CallRecord, OutcomeRecord, TurnRecord } from '../core/records.ts';
import type { LogOf, SqlValue } from './log-db.ts';
import { OUTCOMES_OF, toCall, toOutcome, toTurn } from './log-turns.ts';

/** The rank-1 tool of a routed turn: the first entry of `offered` (stored best first). */
const TOP = `json_extract(r.offered, '$[0].name')`;

/** The review's SQL, exported so its query plans can be checked. ?1 is always the agent. */
export const REVIEW_SQL = {
  /**
   * Per registered tool of ?3 (a JSON array of [name, reviewed_seq], from the tool rows): its review
   * mark, newest call, and counts over its newest ?2 calls / rank-1 turns.
   */
  toolActivity: `
    SELECT t.name, t.reviewed_seq,
      COALESCE((SELECT MAX(c.seq) FROM calls c WHERE c.agent = ?1 AND c.tool = t.name), 0) AS last_call_seq,
      (SELECT COUNT(*) FROM (SELECT 1 FROM calls c WHERE c.agent = ?1 AND c.tool = t.name ORDER BY c.seq DESC LIMIT ?2)) AS recent_calls,
      (SELECT COUNT(*) FROM (SELECT c.success FROM calls c WHERE c.agent = ?1 AND c.tool = t.name ORDER BY c.seq DESC LIMIT ?2) WHERE success = 0) AS recent_failures,
      (SELECT COUNT(*) FROM (SELECT 1 FROM turns r WHERE r.agent = ?1 AND r.routed = 1 AND ${TOP} = +t.name ORDER BY r.seq DESC LIMIT ?2)) AS ranked_first,
      COALESCE((SELECT MAX(c.seq) FROM calls c WHERE c.agent = ?1 AND c.turn_id IN
        (SELECT r.turn_id FROM turns r WHERE r.agent = ?1 AND r.routed = 1 AND ${TOP} = +t.name ORDER BY r.seq DESC LIMIT ?2)), 0) AS last_ranked_call_seq
    FROM (SELECT j.value ->> 0 AS name, j.value ->> 1 AS reviewed_seq FROM json_each(?3) j) t ORDER BY t.name`,
  /** The newest ?3 calls of each tool in ?2. */
  recentCalls: `
    SELECT c.* FROM json_each(?2) j JOIN calls c
      ON c.seq IN (SELECT seq FROM calls WHERE agent = ?1 AND tool = j.value ORDER BY seq DESC LIMIT ?3)`,
  /** The newest ?3 routed turns where routing ranked each tool in ?2 first. */
  rankedFirstTurns: `
    SELECT t.* FROM json_each(?2) j JOIN turns t
      ON t.seq IN (SELECT r.seq FROM turns r WHERE r.agent = ?1 AND r.routed = 1 AND ${TOP} = j.value ORDER BY r.seq DESC LIMIT ?3)`,
  /** Turns by id. */
  turnsById: `SELECT * FROM turns WHERE agent = ?1 AND turn_id IN (SELECT value FROM json_each(?2))`,
  /** The previous and the next turn of the same conversation, for each turn id in ?2. */
  neighbourTurns: `
    SELECT DISTINCT n.* FROM json_each(?2) j CROSS JOIN turns t CROSS JOIN turns n
    WHERE t.agent = ?1 AND t.turn_id = j.value AND n.seq IN (
      (SELECT p.seq FROM turns p WHERE p.agent = ?1 AND p.conversation_id = t.conversation_id AND p.seq < t.seq ORDER BY p.seq DESC LIMIT 1),
      (SELECT q.seq FROM turns q WHERE q.agent = ?1 AND q.conversation_id = t.conversation_id AND q.seq > t.seq ORDER BY q.seq LIMIT 1))`,
  /**
   * For each call seq in ?2 (a call whose run has no recorded turn), the previous and the next call
   * of its conversation that can start a run (it has a turn or a request) and is not of its own turn.
   */
  neighbourCalls: `
    SELECT DISTINCT n.* FROM json_each(?2) j CROSS JOIN calls a CROSS JOIN calls n
    WHERE a.seq = j.value AND a.agent = ?1 AND n.seq IN (
      (SELECT p.seq FROM calls p WHERE p.agent = ?1 AND p.conversation_id = a.conversation_id AND p.seq < a.seq
         AND (p.turn_id IS NOT NULL OR p.request IS NOT NULL) AND (a.turn_id IS NULL OR p.turn_id IS NOT a.turn_id)
         ORDER BY p.seq DESC LIMIT 1),
      (SELECT q.seq FROM calls q WHERE q.agent = ?1 AND q.conversation_id = a.conversation_id AND q.seq > a.seq
         AND (q.turn_id IS NOT NULL OR q.request IS NOT NULL) AND (a.turn_id IS NULL OR q.turn_id IS NOT a.turn_id)
         ORDER BY q.seq LIMIT 1))`,
  /** The newest ?3 calls of each turn in ?2 (a run's serving call is its last successful one). */
  callsOfTurns: `
    SELECT c.* FROM json_each(?2) j JOIN calls c
      ON c.seq IN (SELECT seq FROM calls WHERE agent = ?1 AND turn_id = j.value ORDER BY seq DESC LIMIT ?3)`,
  /** Reported outcomes of the turns in ?2. */
  outcomesOf: OUTCOMES_OF,
} as const;

/** What the review chooses tools by, per registered tool (counts are over the newest `perTool`). */

/** Calls a run's serving call is looked for among: a runaway run's older calls are not read. */
export const CALLS_PER_TURN = 50;

/** Reads for one review; each returns plain records (src/core/records.ts). */
export function createReviewLog(logOf: LogOf): ReviewLogReads {
  const list = (values: readonly (string | number)[]) => JSON.stringify([...new Set(values)]);
  /** The rows `sql` selects for the agent with `binds` after it, mapped; none when there is no key to look up. */
  const rows = async <Row, T>(
    agent: string,
    keys: readonly unknown[],
    sql: string,
    binds: SqlValue[],
    map: (row: Row) => T,
  ): Promise<T[]> => {
    if (keys.length === 0) return [];
    const { results } = await logOf(agent)
      .prepare(sql)
      .bind(agent, ...binds)
      .all<Row>();
    return results.map(map);
  };
  return {
    /** What the review chooses by, for each of the agent's registered `tools`. */
    async toolActivity(
      agent: string,
      tools: readonly { name: string; reviewed_seq: number }[],
      perTool: number,
    ): Promise<ToolActivity[]> {
      const { results } = await logOf(agent)
        .prepare(REVIEW_SQL.toolActivity)
        .bind(agent, perTool, JSON.stringify(tools.map((t) => [t.name, t.reviewed_seq])))
        .all<ToolActivity>();
      return results;
    },

    recentCalls(agent: string, tools: readonly string[], perTool: number): Promise<CallRecord[]> {
      return rows(agent, tools, REVIEW_SQL.recentCalls, [list(tools), perTool], toCall);
    },

    rankedFirstTurns(agent: string, tools: readonly string[], perTool: number): Promise<TurnRecord[]> {
      return rows(agent, tools, REVIEW_SQL.rankedFirstTurns, [list(tools), perTool], toTurn);
    },

    turnsById(agent: string, turnIds: readonly string[]): Promise<TurnRecord[]> {
      return rows(agent, turnIds, REVIEW_SQL.turnsById, [list(turnIds)], toTurn);
    },

    neighbourTurns(agent: string, turnIds: readonly string[]): Promise<TurnRecord[]> {
      return rows(agent, turnIds, REVIEW_SQL.neighbourTurns, [list(turnIds)], toTurn);
    },

    neighbourCalls(agent: string, callSeqs: readonly number[]): Promise<CallRecord[]> {
      return rows(agent, callSeqs, REVIEW_SQL.neighbourCalls, [list(callSeqs)], toCall);
    },

    callsOfTurns(agent: string, turnIds: readonly string[], perTurn = CALLS_PER_TURN): Promise<CallRecord[]> {
      return rows(agent, turnIds, REVIEW_SQL.callsOfTurns, [list(turnIds), perTurn], toCall);
    },

    outcomesOf(agent: string, turnIds: readonly string[]): Promise<OutcomeRecord[]> {
      return rows(agent, turnIds, REVIEW_SQL.outcomesOf, [list(turnIds)], toOutcome);
    },
  };
}
