/**
 * Traces and unregistered tools (docs/api.md `POST …/traces`): one trace becomes a turn and its
 * calls in one atomic D1 batch; unregistered names come back with a draft ready for `PUT …/tools`.
 */
import type { NewCall } from '../core/ports.ts';
import { draftFor } from '../core/drafts.ts';
import { normalizeToolDef, type AuthorDefinition } from '../core/tooldef.ts';
import { detectTraceFormat, readTrace, traceCallId, turnFingerprint, type ReadTrace } from '../core/traces.ts';
import type { Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import { LIMITS, type TraceBody, type UnregisteredTool } from '../schemas.ts';
import { turnWritten } from './turn-writer.ts';
import { writeCalls } from './calls.ts';

/** Unregistered names listed at most (the most failures first). */
export const UNREGISTERED_LIMIT = 100;
/** Most recent calls an inferred draft reads per name. */
export const DRAFT_SAMPLE_CALLS = 50;

/**
 * Records one trace: the turn (linked to an existing `turn_id` from `/route` rather than a second
 * row), the run's calls with their outcome, and the `tools=[…]` definitions. Idempotent: call ids
 * come from the turn id and the trace's tool call ids, and a trace without `turn_id` gets one
 * derived from its content. Answers the number of calls the trace holds (new or already recorded).
 */
export async function ingestTrace(
  svc: Services,
  agent: string,
  body: TraceBody,
  now: string,
): Promise<{ turn_id: string; calls: number }> {
  if (!(await svc.store.getAgent(agent))) throw notFound(`agent ${agent}`);
  const trace = checkedTrace(body);
  const turn_id = body.turn_id ?? (await fingerprintTurnId(body, trace));
  if (body.turn_id) await turnWritten(agent, body.turn_id);
  const existing = await svc.log.getTurn(agent, turn_id);
  const request = existing?.request ?? trace.request;
  const conversation_id = existing?.conversation_id ?? body.conversation_id ?? null;
  const rows: NewCall[] = trace.calls.map((c) => ({
    call_id: traceCallId(turn_id, c),
    tool: c.tool,
    arguments: c.arguments,
    success: c.success,
    error: c.error,
    request,
    turn_id,
    conversation_id,
    at: now,
  }));
  const extra = svc.usage.traceToolStatements(agent, traceDefinitions(body), now);
  if (!existing) {
    extra.unshift(
      svc.log.insertTurn(agent, {
        turn_id,
        request,
        conversation_id,
        routed: false,
        offered: [],
        source: 'trace',
        created_at: now,
      }),
    );
  }
  await writeCalls(svc, agent, rows, extra);
  return { turn_id, calls: rows.length };
}

/** The trace read in its format; a trace that does not fit the format, or is too long, is a 400. */
function checkedTrace(body: TraceBody): ReadTrace {
  const format = body.format ?? detectTraceFormat(body.messages);
  const reading = readTrace(body.messages, format);
  if (!reading.ok) {
    throw new ApiError(
      'invalid_request',
      `the messages are not a valid ${format} trace${body.format ? '' : ' (format detected)'}`,
      reading.issues,
    );
  }
  if (reading.trace.calls.length > LIMITS.callsPerPost) {
    throw new ApiError('invalid_request', `a trace may hold at most ${LIMITS.callsPerPost} tool calls`, [
      { path: ['messages'], message: `${reading.trace.calls.length} tool calls with results` },
    ]);
  }
  return reading.trace;
}

async function fingerprintTurnId(body: TraceBody, trace: ReadTrace): Promise<string> {
  const text = turnFingerprint(body.messages, trace.request_index, body.conversation_id ?? null);
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return `trace-${Array.from(new Uint8Array(digest).slice(0, 16), (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The trace's `tools=[…]` in the author's shape, one per name (the last one sent wins). */
function traceDefinitions(body: TraceBody): AuthorDefinition[] {
  const byName = new Map<string, AuthorDefinition>();
  for (const def of body.tools ?? []) {
    const d = normalizeToolDef(def).definition;
    byName.set(d.name, d);
  }
  return [...byName.values()];
}

/**
 * Names seen in calls or traces that are not registered (docs/learning.md), most failures first, each with
 * a draft: the trace's definition (`metadata`), else inferred from its most recent calls.
 */
export async function unregisteredTools(svc: Services, agent: string): Promise<UnregisteredTool[]> {
  if (!(await svc.store.getAgent(agent))) throw notFound(`agent ${agent}`);
  const rows = await svc.usage.unregisteredTools(agent, await svc.store.toolNames(agent), UNREGISTERED_LIMIT);
  const samples = await svc.usage.recentArguments(
    agent,
    rows.filter((r) => !r.definition).map((r) => r.name),
    DRAFT_SAMPLE_CALLS,
  );
  return rows.map((r) => ({
    name: r.name,
    call_count: r.call_count,
    failure_count: r.failure_count,
    last_seen_at: r.last_seen_at,
    ...draftFor(r.name, r.definition, samples.get(r.name) ?? []),
  }));
}
