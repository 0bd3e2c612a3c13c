/** Turns through the Worker as an agent makes them: a route, then its calls. */
import { expect } from 'vitest';
import { api } from './requests.ts';

/** A call the agent makes in a turn: succeeded unless `success` is false. */
export interface TurnCall {
  tool: string;
  arguments?: Record<string, unknown>;
  success?: boolean;
  error?: string;
  request?: string;
}

/**
 * One turn: `/route` for the request (in a conversation, with `k` tools), then the agent's calls
 * for it with the turn id (`args` where a call gives no arguments). Returns the turn id and the
 * names of the tools routing offered.
 */
export async function routedTurn(
  agent: string,
  conversation: string,
  request: string,
  k: number,
  calls: TurnCall[],
  args: Record<string, unknown> = {},
): Promise<{ turn_id: string; offered: string[] }> {
  const res = await api('POST', `/v1/agents/${agent}/route`, { body: { request, k, conversation_id: conversation } });
  expect(res.status).toBe(200);
  const turnId: string = res.body.turn_id;
  if (calls.length > 0) {
    const body = {
      calls: calls.map((c) => ({
        tool: c.tool,
        arguments: c.arguments ?? args,
        success: c.success ?? true,
        ...(c.error ? { error: c.error } : {}),
        ...(c.request ? { request: c.request } : {}),
        turn_id: turnId,
        conversation_id: conversation,
      })),
    };
    expect((await api('POST', `/v1/agents/${agent}/calls`, { body })).status).toBe(200);
  }
  return { turn_id: turnId, offered: res.body.tools.map((t: { name: string }) => t.name) };
}
