/**
 * The order desk, seeded through the client as an agent would: the client's and the CLI's tests of
 * the review flow start from it. No Workers module: the Node tests use it too.
 */
import type { WhetstoneClient } from '../../src/client/index.ts';
import { tool } from './tools.ts';

/** get_order failed twice with the same error, then succeeded: enough for one revision (docs/learning.md). Returns the turns. */
export async function seedOrderFailures(ws: WhetstoneClient): Promise<string[]> {
  await ws.registerTools([
    tool('get_order', 'Look up an order by its id: status, items and delivery date.', { order_id: { type: 'string' } }),
    tool('refund_order', 'Refund an order, fully or in part.', {
      order_id: { type: 'string' },
      amount: { type: 'number' },
    }),
  ]);
  const requests = ['where is my order 1234?', 'has order 5678 shipped yet?', 'status of order ORD-12345 please'];
  const turns: string[] = [];
  const batch = [];
  for (const [i, request] of requests.entries()) {
    const { turn_id } = await ws.route({ request, conversation_id: `c${i}` });
    turns.push(turn_id);
    const ok = i === 2;
    batch.push({
      id: `call-${i}`,
      tool: 'get_order',
      arguments: { order_id: ok ? 'ORD-12345' : String(1234 + i) },
      success: ok,
      ...(ok ? {} : { error: 'order_id must start with the ORD- prefix' }),
      request,
      turn_id,
      conversation_id: `c${i}`,
    });
  }
  await ws.recordCalls(batch);
  return turns;
}
