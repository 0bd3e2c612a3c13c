/**
 * Whose fault a failed call was (docs/learning.md "Whose fault a failure is"). A usage note tells
 * the caller how to call a tool, so only a failure the caller could have avoided by calling
 * differently teaches one. The others are read from what the log shows, in this order:
 *
 * 1. `no_fault`: a later call of the same tool in the same conversation, with the same arguments,
 *    succeeded. Nothing the caller sent was wrong: the same call worked when retried.
 * 2. `outage`: the error speaks of the service, not of the input: a 5xx, 408 or 429 status, a
 *    timeout, a refused or reset connection, "service unavailable", a rate limit, "try again later".
 *    A status counts with its word ("HTTP 503", "status 502") or its reason phrase ("Bad Gateway"):
 *    a bare number may be an amount ("a transfer of 500 euros").
 * 3. `caller_fault`: the error speaks of the input's form (a 400 or 422 status, "invalid",
 *    "must", "expected", "format", "missing", "required", "one of"), or the value that failed
 *    worked later in the conversation written another way (the caller fixed its form).
 * 4. `business_outcome`: the tool worked and said no on the merits: a 402, 403 or 409 status,
 *    "declined", "insufficient", "already", "on hold", "denied"; or it found nothing ("not found",
 *    "no such", 404) for a value the user typed in the request: the caller passed it faithfully.
 * 5. anything else is `caller_fault`, as before this rule: it still needs repeating across
 *    conversations before a note rests on it.
 *
 * The words are those of HTTP status lines and of error messages in general, not of one tool.
 */
import type { CallRecord } from './records.ts';
import { canonicalJson } from './tooldef.ts';

export type FailureKind = 'caller_fault' | 'outage' | 'business_outcome' | 'no_fault';

/** How a failed call was read, and, for anything but `caller_fault`, why it teaches no note. */
export interface FailureReading {
  kind: FailureKind;
  /** Shown to approvers with the evidence (`why_no_note`); null for a caller's fault. */
  whyNoNote: string | null;
}

/** The service, not the input, failed: HTTP status words and network failures. */
const OUTAGE =
  /\b(?:(?:http|status|code|error)\s*:?\s*(?:5\d\d|408|429)|timed?[\s-]?out|timeout|(?:service|server|backend|upstream|api|system) (?:is |was )?(?:temporarily )?unavailable|temporarily unavailable|unreachable|could ?n[o']t (?:reach|connect)|can ?n[o']t (?:reach|connect)|connection (?:reset|refused|closed|aborted|error)|econn(?:reset|refused|aborted)|etimedout|eai_again|socket hang up|rate[\s-]?limit(?:ed)?|too many requests|try again later|temporar(?:y|ily)|overloaded|internal (?:server )?error|bad gateway|gateway timeout|upstream|network error|maintenance)/i;

/** The error describes the form the input should have taken. */
const INPUT_FORM =
  /\b(?:(?:http|status|code|error)\s*:?\s*(?:400|422)|bad request|unprocessable|invalid|malformed|must|expected|expecting|should (?:be|start|match|look)|format|missing|(?<!payment )required|one of|not (?:a|an) valid|unknown (?:field|param(?:eter)?|argument|property|key|option)|unexpected|(?:too (?:long|short))|start(?:s)? with|cannot parse|could not parse|parse error|type error|schema)/i;

/** The tool answered and refused on the merits. */
const REFUSED_ON_MERITS =
  /\b(?:(?:http|status|code|error)\s*:?\s*(?:402|403|409)|payment required|conflict|declined|refused|rejected|(?:not |un)available|insufficient|already|on hold|out of stock|sold out|not eligible|ineligible|expired|denied|forbidden|not (?:allowed|permitted)|limit (?:reached|exceeded)|exceeds|fully booked|no availability)/i;

/** The tool looked and found nothing: whose fault depends on where the value came from. */
const FOUND_NOTHING =
  /\b(?:not found|no such|does not exist|doesn't exist|unknown|no (?:record|match)|(?:status|http|code)\s*:?\s*404)/i;

/** Values shorter than this (letters and digits only) are too common to say the user typed them. */
const MIN_TYPED_CHARS = 4;

/**
 * Reads every failed call of the log: whose fault it was, and why a note cannot rest on it.
 * `requestOf` gives the request of the call's run (what the user typed), or null.
 */
export function readFailures(
  calls: readonly CallRecord[],
  requestOf: (call: CallRecord) => string | null,
): Map<string, FailureReading> {
  const retried = transientFailures(calls);
  const successes = laterSuccesses(calls);
  const out = new Map<string, FailureReading>();
  for (const c of calls) {
    if (c.success) continue;
    out.set(
      c.call_id,
      retried.has(c.call_id)
        ? { kind: 'no_fault', whyNoNote: 'not the caller’s fault: the same call worked when retried' }
        : failureKind(c, successes.get(c.call_id) ?? [], requestOf(c)),
    );
  }
  return out;
}

/**
 * One failed call read from its error text, the successful calls of the same tool after it in
 * its conversation (`later`), and the request of its run (rules in the file comment, 2 to 5).
 */
export function failureKind(call: CallRecord, later: readonly CallRecord[], request: string | null): FailureReading {
  const error = call.error ?? '';
  const outage = OUTAGE.exec(error);
  if (outage) {
    return {
      kind: 'outage',
      whyNoNote: `an outage: the error says the service failed ("${outage[0].toLowerCase()}"), not that the call was wrong`,
    };
  }
  if (INPUT_FORM.test(error) || fixedLater(call, later)) return { kind: 'caller_fault', whyNoNote: null };
  const merits = REFUSED_ON_MERITS.exec(error);
  if (merits) {
    return {
      kind: 'business_outcome',
      whyNoNote: `a business outcome: the tool worked and said no ("${merits[0].toLowerCase()}")`,
    };
  }
  if (FOUND_NOTHING.test(error) && typedByUser(call, request)) {
    return {
      kind: 'business_outcome',
      whyNoNote:
        'a business outcome: the tool found nothing for a value the user typed, and the call passed it as typed',
    };
  }
  return { kind: 'caller_fault', whyNoNote: null };
}

/**
 * Failed calls that were transient: a later call of the same tool in the same conversation, with
 * the same arguments, succeeded. Nothing the caller sent was wrong (the same call worked when
 * retried), so such a failure says nothing about how to call the tool.
 */
export function transientFailures(calls: readonly CallRecord[]): Set<string> {
  const keyOf = (c: CallRecord): string | null =>
    c.conversation_id === null ? null : `${c.conversation_id}\u0000${c.tool}\u0000${canonicalJson(c.arguments)}`;
  const lastSuccess = new Map<string, number>();
  for (const c of calls) {
    const key = c.success ? keyOf(c) : null;
    if (key !== null) lastSuccess.set(key, Math.max(lastSuccess.get(key) ?? Number.NEGATIVE_INFINITY, c.seq));
  }
  const out = new Set<string>();
  for (const c of calls) {
    const key = c.success ? null : keyOf(c);
    if (key !== null && (lastSuccess.get(key) ?? Number.NEGATIVE_INFINITY) > c.seq) out.add(c.call_id);
  }
  return out;
}

/** For each failed call, the successful calls of its tool later in its conversation. */
function laterSuccesses(calls: readonly CallRecord[]): Map<string, CallRecord[]> {
  const byTool = new Map<string, CallRecord[]>();
  for (const c of calls) {
    if (!c.success || c.conversation_id === null) continue;
    const key = `${c.conversation_id}\u0000${c.tool}`;
    byTool.set(key, [...(byTool.get(key) ?? []), c]);
  }
  const out = new Map<string, CallRecord[]>();
  for (const c of calls) {
    if (c.success || c.conversation_id === null) continue;
    const later = (byTool.get(`${c.conversation_id}\u0000${c.tool}`) ?? []).filter((s) => s.seq > c.seq);
    if (later.length > 0) out.set(c.call_id, later);
  }
  return out;
}

/** Letters and digits of a value, lower-cased: "4471-XK", "4471 xk" and "4471XK" read the same. */
function bare(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number'
    ? String(value)
        .toLowerCase()
        .replace(/[\W_]+/g, '')
    : '';
}

/** String and number leaves of a call's arguments, by argument name (top level). */
function leaves(call: CallRecord): [string, string][] {
  return Object.entries(call.arguments).flatMap(([k, v]) => {
    const b = bare(v);
    return b.length >= MIN_TYPED_CHARS ? [[k, b] as [string, string]] : [];
  });
}

/**
 * The caller fixed the call's form: a later success passed, under the same argument name, a value
 * that differs from the failing one yet holds it ("123456" failed, "CW-123456" worked).
 */
function fixedLater(call: CallRecord, later: readonly CallRecord[]): boolean {
  const failing = leaves(call);
  return later.some((s) =>
    failing.some(([name, value]) => {
      const now = s.arguments[name];
      const b = bare(now);
      return (
        typeof now !== 'undefined' && canonicalJson(now) !== canonicalJson(call.arguments[name]) && b.includes(value)
      );
    }),
  );
}

/** A value of the call appears in the request as the user typed it (up to case, spaces and dashes). */
function typedByUser(call: CallRecord, request: string | null): boolean {
  if (request === null) return false;
  const typed = bare(request);
  return leaves(call).some(([, value]) => typed.includes(value));
}
