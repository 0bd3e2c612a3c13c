/**
 * Upgrading a deployment whose log is in D1 (an earlier version): the scheduled move brings every
 * row into its agent's Durable Object with the seq D1 gave, across bounded ticks, and the object's
 * own seqs start above them, so nothing is lost and the newest call is still the newest.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { services } from '../src/env.ts';
import { moveLegacyLog } from '../src/services/legacy-log-move.ts';
import { count, logDb } from './helpers/log.ts';
import { agentId, api } from './helpers/requests.ts';
import { tool } from './helpers/tools.ts';

const svc = services(env);
const AT = '2026-11-01T10:00:00.000Z';

/** An agent as an earlier version left it: its row in D1 and `n` turns, calls, outcomes and definitions in D1's log. */
async function legacyAgent(n: number): Promise<string> {
  const agent = agentId('legacy');
  const statements = [
    env.DB.prepare("INSERT INTO agents (agent, created_at, settings) VALUES (?1, ?2, '{}')").bind(agent, AT),
  ];
  for (let i = 0; i < n; i++) {
    statements.push(
      env.DB.prepare(
        "INSERT INTO turns (agent, turn_id, request, conversation_id, routed, offered, source, created_at) VALUES (?1, ?2, 'where is my order', NULL, 1, '[]', 'route', ?3)",
      ).bind(agent, `old-t${i}`, AT),
      env.DB.prepare(
        "INSERT INTO calls (agent, call_id, tool, arguments, success, error, request, turn_id, conversation_id, at) VALUES (?1, ?2, 'lookup', '{\"id\":1}', 0, 'unknown id', NULL, ?3, NULL, ?4)",
      ).bind(agent, `old-c${i}`, `old-t${i}`, AT),
      env.DB.prepare('INSERT INTO outcomes (agent, turn_id, ok, served_by, at) VALUES (?1, ?2, 1, NULL, ?3)').bind(
        agent,
        `old-t${i}`,
        AT,
      ),
      env.DB.prepare("INSERT INTO trace_tools (agent, name, definition, seen_at) VALUES (?1, ?2, '{}', ?3)").bind(
        agent,
        `traced_${i}`,
        AT,
      ),
    );
  }
  await env.DB.batch(statements);
  return agent;
}

const d1Rows = async (table: string, agent: string) =>
  (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE agent = ?1`).bind(agent).first<{ n: number }>())?.n ??
  0;

describe('moving a D1 log into the agents’ objects', () => {
  it('moves every row with its seq across ticks, and seqs written since stay newer', async () => {
    const agent = await legacyAgent(30);
    const { results: old } = await env.DB.prepare('SELECT call_id, seq FROM calls WHERE agent = ?1 ORDER BY seq')
      .bind(agent)
      .all<{ call_id: string; seq: number }>();
    // The upgraded Worker serves the agent before the move has run: a new call lands in its object.
    const tools = [tool('lookup', 'Look up an order.')];
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } })).status).toBe(200);
    const posted = await api('POST', `/v1/agents/${agent}/calls`, {
      body: { calls: [{ id: 'new-c', tool: 'lookup', arguments: { id: 2 }, success: true }] },
    });
    expect(posted.body).toEqual({ accepted: 1, duplicates: 0 });

    // 40 rows a tick (10 a table): 30 rows a table take three ticks, the fourth finds none.
    const ticks = [];
    for (let i = 0; i < 4; i++) ticks.push(await moveLegacyLog(svc, 40));
    expect(ticks.map((t) => t.more)).toEqual([true, true, true, false]);
    for (const table of ['turns', 'calls', 'outcomes', 'trace_tools']) {
      expect({ table, d1: await d1Rows(table, agent) }).toEqual({ table, d1: 0 });
    }
    expect(await count('turns', agent)).toBe(30);
    expect(await count('outcomes', agent)).toBe(30);
    expect(await count('trace_tools', agent)).toBe(30);
    const { results: now } = await logDb(agent)
      .prepare('SELECT call_id, seq FROM calls WHERE agent = ?1 ORDER BY seq')
      .bind(agent)
      .all<{ call_id: string; seq: number }>();
    const newest = now.at(-1);
    expect(now.slice(0, -1)).toEqual(old);
    expect(newest?.call_id).toBe('new-c');
    expect(newest?.seq).toBeGreaterThan(old.at(-1)?.seq ?? Number.POSITIVE_INFINITY);

    // What was moved is read like any log: the export lists the old calls, then the new one.
    const exported = (await api<string>('GET', `/v1/agents/${agent}/export`)).body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; call_id?: string });
    expect(exported.filter((l) => l.type === 'call').map((l) => l.call_id)).toEqual([
      ...old.map((c) => c.call_id),
      'new-c',
    ]);
  });
});
