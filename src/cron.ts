/**
 * The scheduled review pass (docs/learning.md). Each tick reviews agents with calls since their last review
 * whose `review_schedule` is due, at most AGENTS_PER_TICK of them, one after another, starting after
 * the agent where the previous tick stopped (cron_state.cursor) and wrapping round. Each review
 * takes the agent's Durable Object lease (src/services/review.ts), so a manual review and a cron
 * review of one agent never overlap: the cron skips an agent whose lease is held and finds it again
 * on a later tick. A failure for one agent is logged (no secrets), recorded as a review row, and the
 * rest go on; a failure for one tool is a skip inside that agent's review.
 */
import { logError } from './logger.ts';
import type { AgentDue } from './core/ports.ts';
import type { Services } from './env.ts';
import { ApiError } from './errors.ts';
import { SettingsPatch } from './schemas.ts';
import { runReview } from './services/review.ts';
import { settingsOf } from './services/route-serving.ts';
import { syncUpstream } from './services/upstream-sync.ts';
import { syncBackoffMs } from './core/upstream-naming.ts';
import { notifyReviewFailed } from './services/webhook-delivery.ts';

/** Agents reviewed per tick: a tick is one Worker invocation, bounded in time and model calls. */
export const AGENTS_PER_TICK = 5;
/** Agents with new calls read per scan (one index seek each); a tick scans at most two pages. */
const SCAN_LIMIT = 100;
/** Cron ticks drift by seconds: "*\/10" is due when 10 minutes less this slack have passed. */
const SCHEDULE_SLACK_MS = 60_000;

/** What one tick did (returned for tests and logs; the lasting record is the reviews rows). */
export interface CronTick {
  reviewed: string[];
  /** Agents whose review lease was held (a manual review running): found again on a later tick. */
  busy: string[];
  failed: { agent: string; error: string }[];
  /** Where the next tick starts ('' = from the first agent). */
  cursor: string;
}

/** One scheduled pass at `now` (the tick's scheduled time). */
export async function runScheduledReviews(svc: Services, now: string): Promise<CronTick> {
  const { agents, next } = await dueAgents(svc, await svc.revisions.getCronCursor(), now);
  const tick: CronTick = { reviewed: [], busy: [], failed: [], cursor: next };
  for (const agent of agents) await reviewOne(svc, agent, now, tick);
  await svc.revisions.setCronCursor(next, now);
  return tick;
}

/** True when the agent's `review_schedule` ("off" | "*\/N" minutes) has come round since its last review. */
export function scheduleDue(schedule: string, lastReviewAt: string | null, now: string): boolean {
  const m = /^\*\/(\d+)$/.exec(schedule);
  if (!m) return false;
  if (lastReviewAt === null) return true;
  return Date.parse(now) - Date.parse(lastReviewAt) >= Number(m[1]) * 60_000 - SCHEDULE_SLACK_MS;
}

/**
 * Up to AGENTS_PER_TICK due agents after `cursor`, then (wrapping) from the first agent up to it.
 * The next cursor is the last agent taken, the last one scanned when a page filled, or '' at the end.
 */
async function dueAgents(svc: Services, cursor: string, now: string): Promise<{ agents: AgentDue[]; next: string }> {
  const picked: AgentDue[] = [];
  for (const from of cursor === '' ? [''] : [cursor, '']) {
    const page = await svc.revisions.agentsWithNewCalls(from, SCAN_LIMIT);
    for (const a of page) {
      if (from === '' && cursor !== '' && a.agent > cursor) return { agents: picked, next: '' };
      if (!scheduleDue(scheduleOf(a), a.last_review_at, now)) continue;
      picked.push(a);
      if (picked.length === AGENTS_PER_TICK) return { agents: picked, next: a.agent };
    }
    const last = page[page.length - 1];
    if (page.length === SCAN_LIMIT && last) return { agents: picked, next: last.agent };
  }
  return { agents: picked, next: '' };
}

function scheduleOf(a: AgentDue): string {
  const stored = SettingsPatch.safeParse(a.settings);
  return settingsOf(stored.success ? stored.data : {}).review_schedule;
}

async function reviewOne(svc: Services, a: AgentDue, now: string, tick: CronTick): Promise<void> {
  try {
    await runReview(svc, a.agent, { dry_run: false, actor: 'cron' }, now, 'cron');
    tick.reviewed.push(a.agent);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'conflict') {
      tick.busy.push(a.agent);
      return;
    }
    const error = err instanceof Error ? err.message : String(err);
    tick.failed.push({ agent: a.agent, error });
    logError('cron_review_failed', { agent: a.agent, error });
    await recordFailure(svc, a, error, now);
  }
}

/**
 * A failed agent gets a review row saying why, and waits for its next due time (its call mark
 * stays); its `review.failed` webhooks are told.
 */
async function recordFailure(svc: Services, a: AgentDue, error: string, now: string): Promise<void> {
  const reviewId = `rvw_${crypto.randomUUID()}`;
  await notifyReviewFailed(svc, a.agent, reviewId, 'cron', error, now);
  try {
    await svc.revisions.commit([
      svc.revisions.insertReviewStatement(a.agent, {
        review_id: reviewId,
        created_at: now,
        trigger: 'cron',
        summary: { error },
      }),
      svc.revisions.markAgentReviewed(a.agent, now, a.last_review_seq),
    ]);
  } catch (err) {
    logError('cron_failure_not_recorded', { agent: a.agent, error: err instanceof Error ? err.message : String(err) });
  }
}

/** Upstreams synced per tick, side by side: each is bounded by its own timeout, so none waits on another. */
export const UPSTREAMS_PER_TICK = 10;

/** What one tick's upstream syncs did. */
export interface UpstreamTick {
  synced: string[];
  failed: { upstream: string; error: string }[];
}

/**
 * Re-syncs the upstreams whose next sync is due (docs/integrations.md): a healthy one hourly, a
 * failing one after its backoff (src/core/upstream-naming.ts), which each failed sync doubles.
 */
export async function runUpstreamSyncs(svc: Services, now: string): Promise<UpstreamTick> {
  const due = await svc.upstreams.due(now, UPSTREAMS_PER_TICK);
  const tick: UpstreamTick = { synced: [], failed: [] };
  await Promise.all(
    due.map(async (u) => {
      const id = `${u.agent}/${u.name}`;
      try {
        const report = await syncUpstream(svc, u.agent, u.name, now);
        if (report.status === 'ok') tick.synced.push(id);
        else tick.failed.push({ upstream: id, error: report.error ?? '' });
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        tick.failed.push({ upstream: id, error });
        logError('upstream_sync_failed', { agent: u.agent, upstream: u.name, error });
        const failures = u.failures + 1;
        const next_sync_at = new Date(Date.parse(now) + syncBackoffMs(failures)).toISOString();
        await svc.upstreams.recordFailure(
          u.agent,
          u.name,
          { status: 'failing', last_error: error, failures, next_sync_at },
          now,
        );
      }
    }),
  );
  return tick;
}
