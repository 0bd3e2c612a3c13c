/**
 * The agent of the learning evaluation: what it calls once `/route` has answered. Two models:
 *
 * - `perfect`: always calls the right tool (found by searching when routing did not offer it),
 *   never fails, every call with its turn id.
 * - `fallible` (the headline): the rates below, seeded per request so every run does the same.
 *   When the right tool was not offered it goes looking part of the time (a `not_offered` call);
 *   otherwise it calls the top-ranked wrong tool, which answers, and the user asks again in the same
 *   conversation in other words (another training wording of the same tool), which is then served.
 *   A fixed subset of tools has an argument mistake the agent makes part of the time (a failed call
 *   with that tool's error text, then a retry that works); some runs make a lookup before the
 *   change; part of the calls arrive without a turn id (with the conversation and the request).
 */
import type { EvalQuery } from './eval-data.ts';
import type { EvalCall } from './eval-http.ts';

/** Share of requests whose right tool was not offered where the agent goes looking for it. */
export const FIND_RATE = 0.5;
/** Share of tools with a planted argument mistake (chosen by a seeded draw on the tool name). */
export const MISTAKE_TOOL_SHARE = 0.1;
/** Share of calls to such a tool that first fail with its mistake. */
export const MISTAKE_RATE = 0.5;
/** Share of runs that make a lookup (another offered tool, which answers) before the change. */
export const LOOKUP_RATE = 0.2;
/** Share of runs whose calls are reported without the turn id. */
export const LOOSE_RATE = 0.25;

export type AgentKind = 'perfect' | 'fallible';

/** The argument every tool with a planted mistake declares, and the error its mistake gets. */
export const PLANTED_ARGUMENT = 'record_ref';
export const plantedError = (value: string): string =>
  `${PLANTED_ARGUMENT} "${value}" not found; references start with REF-`;

/** FNV-1a of a key, for seeded draws independent of each other. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A uniform draw in [0, 1) from a key. */
export function draw(key: string): number {
  return hash(key) / 2 ** 32;
}

/** True for the tools with a planted argument mistake. */
export function hasMistake(tool: string): boolean {
  return draw(`mistake-tool:${tool}`) < MISTAKE_TOOL_SHARE;
}

/** What the agent did for one request: its calls, and the re-ask it needs routed, if any. */
export interface AgentStep {
  calls: EvalCall[];
  /** The wording the user asks again with (same conversation) when the agent called a wrong tool. */
  reask: EvalQuery | null;
}

interface Context {
  kind: AgentKind;
  /** A key unique to this request in this run (round, index, re-ask or not). */
  key: string;
  query: EvalQuery;
  offered: readonly string[];
  turnId: string;
  conversation: string;
  /** The next wording of the same tool, used when the user asks again. */
  another: EvalQuery | null;
  /** A re-ask: the agent serves it (finds the right tool when it was not offered). */
  final?: boolean;
}

/** The calls for one routed request (and whether the user will ask again). */
export function agentStep(c: Context): AgentStep {
  const loose = c.kind === 'fallible' && draw(`loose:${c.key}`) < LOOSE_RATE;
  const call = (
    n: number,
    tool: string,
    args: Record<string, unknown>,
    success: boolean,
    error?: string,
  ): EvalCall => ({
    id: `${c.key}-${n}`,
    tool,
    arguments: args,
    success,
    ...(error === undefined ? {} : { error }),
    request: c.query.text,
    ...(loose ? {} : { turn_id: c.turnId }),
    conversation_id: c.conversation,
  });
  const right = c.query.tool;
  const offeredRight = c.offered.includes(right);
  if (c.kind === 'perfect') return { calls: [call(0, right, argsOf(right, c.key), true)], reask: null };
  const calls: EvalCall[] = [];
  const other = c.offered.find((t) => t !== right);
  if (!offeredRight && !c.final && c.another !== null && other !== undefined && draw(`find:${c.key}`) >= FIND_RATE) {
    // Called the top-ranked wrong tool, which answered: the user asks again in other words.
    const wrong = c.offered[0] === right ? other : (c.offered[0] ?? other);
    calls.push(call(0, wrong, argsOf(wrong, c.key), true));
    return { calls, reask: c.another };
  }
  if (other !== undefined && draw(`lookup:${c.key}`) < LOOKUP_RATE)
    calls.push(call(1, other, argsOf(other, c.key), true));
  if (hasMistake(right) && draw(`mistake:${c.key}`) < MISTAKE_RATE) {
    const bare = String(10000 + (hash(`value:${c.key}`) % 90000));
    calls.push(call(2, right, { [PLANTED_ARGUMENT]: bare }, false, plantedError(bare)));
  }
  calls.push(call(3, right, argsOf(right, c.key), true));
  return { calls, reask: null };
}

/** The arguments of a call that works: a planted tool's reference with its prefix, else none. */
function argsOf(tool: string, key: string): Record<string, unknown> {
  if (!hasMistake(tool)) return {};
  return { [PLANTED_ARGUMENT]: `REF-${10000 + (hash(`value:${key}`) % 90000)}` };
}
