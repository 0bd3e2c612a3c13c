/**
 * Usage notes rest only on failures that were the caller's fault (docs/learning.md "Whose fault a
 * failure is"), through HTTP on real local D1 with the offline extractive model: an outage or a
 * business outcome repeated across conversations teaches no note and the review says why; a wrong
 * format repeated across two conversations still teaches one.
 */
import { describe, expect, it } from 'vitest';
import { count } from '../helpers/log.ts';
import { agentWithTools, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const CLAIM = { claim_ref: { type: 'string' } };
const TOOLS = [
  tool('lookup_claim', 'Look up an insurance claim by its claim reference and show its status.', CLAIM),
  tool('pay_claim', 'Pay out a settled insurance claim to the policy holder.', CLAIM),
];

interface Call {
  tool: string;
  arguments: Record<string, unknown>;
  success?: boolean;
  error?: string;
}

/** A call of `tool` that failed with `error`. */
const failedCall = (tool: string, args: Record<string, unknown>, error: string): Call => ({
  tool,
  arguments: args,
  success: false,
  error,
});

/** A fresh agent with the file's tools. */
const setup = () => agentWithTools(TOOLS, 'notes');

/** One turn of a conversation: `/route`, then the agent's calls with the turn id. */
async function turn(agent: string, conversation: string, request: string, calls: Call[]): Promise<void> {
  const res = await api('POST', `/v1/agents/${agent}/route`, {
    body: { request, k: 2, conversation_id: conversation },
  });
  expect(res.status).toBe(200);
  const body = {
    calls: calls.map((c) => ({
      success: true,
      ...c,
      turn_id: res.body.turn_id,
      conversation_id: conversation,
    })),
  };
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body })).status).toBe(200);
}

const OUTAGE_WHY = 'an outage: the error says the service failed ("http 503"), not that the call was wrong';

describe('usage notes rest only on failures that were the caller’s fault', () => {
  it('an outage repeated across three conversations teaches no note, and the review says why', async () => {
    const agent = await setup();
    for (const n of [1, 2, 3]) {
      await turn(agent, `out-${n}`, `show claim CW-80000${n}`, [
        failedCall('lookup_claim', { claim_ref: `CW-80000${n}` }, 'HTTP 503 from claims'),
      ]);
    }
    const res = await api('POST', `/v1/agents/${agent}/reviews`, { body: {} });
    expect(res.status).toBe(200);
    expect(res.body.revisions).toEqual([]);
    expect(res.body.model_calls).toBe(0);
    expect(res.body.skipped).toContainEqual({
      tool: 'lookup_claim',
      reason: `nothing_to_fix: 0 failed calls, 0 missed and 0 confused requests, each below its threshold; 3 failed calls that were not the caller's fault teach no note (${OUTAGE_WHY})`,
    });
    expect(await count('revisions', agent)).toBe(0);
    const row = (await api('GET', `/v1/agents/${agent}/tools`)).body.tools.find(
      (t: { name: string }) => t.name === 'lookup_claim',
    );
    expect(row.notes).toEqual([]);
  });

  it('a wrong format repeated across two conversations still teaches a note; an outage beside it is shown with why it teaches none', async () => {
    const agent = await setup();
    const format = (ref: string) => `claim_ref "${ref}" not found; references start with CW-`;
    for (const n of [1, 2]) {
      await turn(agent, `fmt-${n}`, `show claim 90000${n}`, [
        failedCall('lookup_claim', { claim_ref: `90000${n}` }, format(`90000${n}`)),
        { tool: 'lookup_claim', arguments: { claim_ref: `CW-90000${n}` } },
      ]);
      await turn(agent, `down-${n}`, `status of claim CW-91000${n}`, [
        failedCall('lookup_claim', { claim_ref: `CW-91000${n}` }, 'HTTP 503 from claims'),
      ]);
    }
    const res = await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true } });
    expect(res.status).toBe(200);
    const rev = res.body.revisions.find((r: { tool: string }) => r.tool === 'lookup_claim');
    expect(rev.notes_added).toEqual([
      'Calls fail with "claim_ref "<value>" not found; references start with CW-"; pass claim_ref with its prefix.',
    ]);
    const failed = rev.evidence.filter((e: { kind: string }) => e.kind === 'failed_call');
    expect(failed.map((e: { text: string; why_no_note?: string }) => [e.text, e.why_no_note ?? null])).toEqual([
      ['claim_ref "<value>" not found; references start with CW-', null],
      ['HTTP <value> from claims', OUTAGE_WHY],
      ['claim_ref "<value>" not found; references start with CW-', null],
      ['HTTP <value> from claims', OUTAGE_WHY],
    ]);
    expect(rev.refused).toEqual([]);
  });

  it('a business outcome (the tool said no on the merits) repeated across conversations teaches no note', async () => {
    const agent = await setup();
    for (const n of [1, 2, 3]) {
      await turn(agent, `biz-${n}`, `pay out claim CW-70000${n}`, [
        failedCall('pay_claim', { claim_ref: `CW-70000${n}` }, 'payment declined: claim is not settled'),
      ]);
    }
    const res = await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true } });
    expect(res.status).toBe(200);
    expect(res.body.revisions).toEqual([]);
    expect(res.body.skipped).toContainEqual({
      tool: 'pay_claim',
      reason:
        'nothing_to_fix: 0 failed calls, 0 missed and 0 confused requests, each below its threshold; 3 failed calls that were not the caller\'s fault teach no note (a business outcome: the tool worked and said no ("declined"))',
    });
  });
});
