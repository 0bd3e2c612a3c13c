/**
 * Which tool finally served each run (docs/learning.md "Attribution"): computed once, read by every
 * learning rule (misses, confusions, the displacement re-check) and by the pins and quality views.
 *
 * - `own`: the run's last successful call served it (a lookup on the way to a change is
 *   preparation, not what the request was for);
 * - `next_request`: the same conversation's next request re-asked it (it shares a content word
 *   with the run's request: a conversation that moved on to another task is no re-ask) and
 *   another tool served it, so the request belongs to that tool — "corrected" when the run itself
 *   had been served by a tool, a plain miss when nothing had served it;
 * - `verified`: the application reported through `/outcomes` which tool should have served the
 *   turn, and that names another tool than the two rules above; the report stands.
 */
import type { CallRecord, OutcomeRecord } from './records.ts';
import { withoutPlaceholders } from './scrub.ts';
import { conversations, type Run } from './serving.ts';
import { contentWords } from './text.ts';

export interface Attribution {
  run: Run;
  /** The tool that finally served the request, or null when nothing did. */
  served_by: string | null;
  /** How `served_by` was found; null when nothing served the request. */
  via: 'own' | 'next_request' | 'verified' | null;
  /** The call that served the request (in the next run for `next_request`), when one did. */
  call: CallRecord | null;
  /** The run's own serving tool (its last successful call), whatever the attribution says. */
  own: string | null;
  /** The next run of the conversation, when `via` is `next_request`. */
  next: Run | null;
}

/** One attribution per run, keyed by run key. Outcomes: the last one reported for a turn stands. */
export function attributeRuns(runs: readonly Run[], outcomes: readonly OutcomeRecord[] = []): Map<string, Attribution> {
  const out = new Map<string, Attribution>();
  for (const run of runs) {
    const own = run.serving?.tool ?? null;
    out.set(run.key, { run, served_by: own, via: own === null ? null : 'own', call: run.serving, own, next: null });
  }
  for (const list of conversations(runs)) {
    for (let i = 0; i + 1 < list.length; i++) {
      const run = list[i];
      const next = list[i + 1];
      const later = next?.serving?.tool ?? null;
      const entry = run ? out.get(run.key) : undefined;
      if (!run || !entry || !next || later === null || later === entry.own || !reAsks(run, next)) continue;
      entry.served_by = later;
      entry.via = 'next_request';
      entry.call = next.serving;
      entry.next = next;
    }
  }
  const latest = new Map<string, OutcomeRecord>();
  for (const o of outcomes) latest.set(o.turn_id, o);
  for (const entry of out.values()) {
    const named = entry.run.turn_id === null ? null : (latest.get(entry.run.turn_id)?.served_by ?? null);
    if (named === null || named === entry.served_by) continue;
    entry.served_by = named;
    entry.via = 'verified';
    entry.call = [...entry.run.calls].reverse().find((c) => c.tool === named && c.success) ?? null;
    entry.next = null;
  }
  return out;
}

/** The next request re-asks the run's: the two share a content word (stemmed, stopwords out). */
export function reAsks(run: Run, next: Run): boolean {
  if (run.request === null || next.request === null) return false;
  const words = contentWords(withoutPlaceholders(run.request));
  for (const w of contentWords(withoutPlaceholders(next.request))) if (words.has(w)) return true;
  return false;
}

/** True when the run called `tool` at all (successfully or not): its wording reached that tool. */
export function calledTool(run: Run, tool: string): boolean {
  return run.calls.some((c) => c.tool === tool);
}
