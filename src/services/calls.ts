/** The call log (docs/api.md `POST …/calls`): one atomic batch, idempotent by call id. */
import type { LogStatement, NewCall } from '../core/ports.ts';
import { storedRequest } from '../core/long-request.ts';
import type { Services } from '../env.ts';
import { notFound } from '../errors.ts';
import { turnsWritten } from './turn-writer.ts';
import type { CallIn } from '../schemas.ts';

/** Stores calls; a call whose id was seen before (in this batch or earlier) counts as a duplicate. */
export async function recordCalls(
  svc: Services,
  agent: string,
  calls: readonly CallIn[],
  now: string,
): Promise<{ accepted: number; duplicates: number }> {
  if (!(await svc.store.getAgent(agent))) throw notFound(`agent ${agent}`);
  // A call may name a turn `/route` answered a moment ago: its grouped write lands first, so the
  // log never holds a call whose turn is still on its way (docs/learning.md "Read your writes"),
  // waiting at most one bounded window.
  await turnsWritten(agent, [...new Set(calls.flatMap((c) => (c.turn_id ? [c.turn_id] : [])))]);
  const rows: NewCall[] = calls.map((c) => ({
    call_id: c.id ?? crypto.randomUUID(),
    tool: c.tool,
    arguments: c.arguments,
    success: c.success,
    error: c.error ?? null,
    request: c.request ? storedRequest(c.request) : null,
    turn_id: c.turn_id ?? null,
    conversation_id: c.conversation_id ?? null,
    at: c.at ? new Date(c.at).toISOString() : now,
  }));
  const accepted = await writeCalls(svc, agent, rows);
  return { accepted, duplicates: calls.length - accepted };
}

/**
 * Writes calls (and `extra` statements of the same log) in one transaction of the agent's log, then
 * notes them in the agent's row in D1: the newest-call mark the cron scans (src/cron.ts) and the
 * count the agent list shows. Returns how many calls were new. If the note fails the calls are
 * kept, and the next write moves the mark (the count stays short by this write).
 */
export async function writeCalls(
  svc: Services,
  agent: string,
  rows: readonly NewCall[],
  extra: LogStatement[] = [],
): Promise<number> {
  const { accepted, lastSeq } = await svc.log.insertCalls(agent, rows, extra);
  if (accepted > 0) await svc.revisions.noteCalls(agent, lastSeq, accepted);
  return accepted;
}
