/**
 * The requests a try run of a revision replays (docs/api.md "Try before apply"): first those the
 * revision rests on, then a sample of the tool's recent served requests, so an approver sees both
 * what the change is for and what it might break. Pure: the texts are as the log and the evidence
 * store them (argument values already masked); placeholders are taken out as `ranks` does.
 */
import type { Evidence } from '../schemas.ts';
import { withoutPlaceholders } from './scrub.ts';

/** Requests a try run replays at most: from the evidence, then from the tool's served calls. */
export const TRY_EVIDENCE_REQUESTS = 12;
export const TRY_SERVED_REQUESTS = 8;

export interface TryRequest {
  /** The request as stored, placeholders removed. */
  request: string;
  /** `evidence` (the revision rests on it, `evidence_kind` says how) or `served` (a recent call of the tool). */
  source: 'evidence' | 'served';
  evidence_kind: Evidence['kind'] | null;
  /** The tool that should serve it: the one that did (a confused request), else the revision's tool. */
  expected: string;
}

/** A recent call of the tool with the request it answered (its own, or its turn's). */
export interface ServedCall {
  call_id: string;
  success: boolean;
  request: string | null;
}

/**
 * The requests to replay: each missed, confused or served request of the evidence, and the request
 * of each failed call still among `calls`; then the requests of the tool's successful `calls`,
 * newest first. Each distinct text once (the first reason it was chosen wins); empty texts skipped.
 */
export function tryRequests(
  tool: string,
  evidence: readonly Evidence[],
  calls: readonly ServedCall[],
  limits = { evidence: TRY_EVIDENCE_REQUESTS, served: TRY_SERVED_REQUESTS },
): TryRequest[] {
  const seen = new Set<string>();
  const out: TryRequest[] = [];
  const byCall = new Map(calls.map((c) => [c.call_id, c]));
  const add = (text: string | null, entry: Omit<TryRequest, 'request'>): boolean => {
    const request = withoutPlaceholders(text ?? '')
      .replace(/\s+/g, ' ')
      .trim();
    if (request === '' || seen.has(request)) return false;
    seen.add(request);
    out.push({ request, ...entry });
    return true;
  };
  let fromEvidence = 0;
  for (const e of evidence) {
    if (fromEvidence >= limits.evidence) break;
    const text = e.kind === 'failed_call' ? (byCall.get(e.call_id ?? '')?.request ?? null) : e.text;
    const expected = e.kind === 'confused_request' ? (e.served_by ?? tool) : tool;
    if (add(text, { source: 'evidence', evidence_kind: e.kind, expected })) fromEvidence += 1;
  }
  let served = 0;
  for (const c of calls) {
    if (served >= limits.served) break;
    if (c.success && add(c.request, { source: 'served', evidence_kind: null, expected: tool })) served += 1;
  }
  return out;
}

/** A test endpoint's answer read as `{result}`; anything else is an error naming what came back. */
export function testEndpointResult(status: number, body: string): { result: unknown } | { error: string } {
  if (status < 200 || status >= 300) return { error: `HTTP ${status}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { error: 'the answer is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !('result' in parsed))
    return { error: 'the answer has no "result"' };
  return { result: (parsed as { result: unknown }).result };
}
