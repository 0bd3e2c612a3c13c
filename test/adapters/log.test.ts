/**
 * The log's time-range reads (src/adapters/log-turns.ts) on an agent's real Durable Object: more rows than
 * one page, read page by page, come back whole, in order, capped where the caller said, with the
 * outcomes of every turn read.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { LOG_PAGE_ROWS } from '../../src/adapters/log-turns.ts';
import { services } from '../../src/env.ts';
import { logDb } from '../helpers/log.ts';
import { agentId } from '../helpers/requests.ts';

const svc = services(env);
const ROWS = 2 * LOG_PAGE_ROWS + 500;
/** Row i is dated i seconds after the start; three rows share each second, so pages split ties. */
const START = Date.parse('2026-10-01T00:00:00.000Z');
const time = (i: number) => new Date(START + Math.floor(i / 3) * 1000).toISOString();

async function agentWithRows(): Promise<string> {
  const agent = agentId('pages');
  const db = logDb(agent);
  const rows = Array.from({ length: ROWS }, (_, i) => i);
  await db.batch([
    db
      .prepare(
        `INSERT INTO turns (agent, turn_id, request, conversation_id, routed, offered, source, created_at)
         SELECT ?1, 't' || j.value, 'r', NULL, 1, '[]', 'route', j.value2 FROM
           (SELECT value, json_extract(?3, '$[' || key || ']') AS value2 FROM json_each(?2)) j`,
      )
      .bind(agent, JSON.stringify(rows), JSON.stringify(rows.map(time))),
    db
      .prepare(
        `INSERT INTO calls (agent, call_id, tool, arguments, success, error, request, turn_id, conversation_id, at)
         SELECT ?1, 'c' || j.value, 'x', '{}', 1, NULL, NULL, 't' || j.value, NULL, j.value2 FROM
           (SELECT value, json_extract(?3, '$[' || key || ']') AS value2 FROM json_each(?2)) j`,
      )
      .bind(agent, JSON.stringify(rows), JSON.stringify(rows.map(time))),
    db
      .prepare(
        "INSERT INTO outcomes (agent, turn_id, ok, served_by, at) SELECT ?1, 't' || value, 1, NULL, ?3 FROM json_each(?2)",
      )
      .bind(agent, JSON.stringify(rows), time(0)),
  ]);
  return agent;
}

describe('reading a time range of the log in pages', () => {
  it('returns the oldest or newest rows whole and in order across pages, with every outcome', async () => {
    const agent = await agentWithRows();
    const limit = ROWS - 100;
    const oldest = await svc.log.rangeLog(agent, time(0), time(ROWS), limit);
    expect(oldest.truncated).toBe(true);
    expect(oldest.turns.map((t) => t.turn_id)).toEqual(Array.from({ length: limit }, (_, i) => `t${i}`));
    expect(oldest.calls.map((c) => c.call_id)).toEqual(Array.from({ length: limit }, (_, i) => `c${i}`));
    expect(oldest.outcomes).toHaveLength(limit);

    const newest = await svc.log.windowLog(agent, time(0), limit);
    expect(newest.turns.map((t) => t.turn_id)).toEqual(Array.from({ length: limit }, (_, i) => `t${ROWS - 1 - i}`));
    expect(newest.calls.map((c) => c.call_id)).toEqual(Array.from({ length: limit }, (_, i) => `c${ROWS - 1 - i}`));

    const all = await svc.log.rangeLog(agent, time(0), time(ROWS + 3), ROWS + 1);
    expect({ truncated: all.truncated, turns: all.turns.length, outcomes: all.outcomes.length }).toEqual({
      truncated: false,
      turns: ROWS,
      outcomes: ROWS,
    });
  });
});
