/**
 * Log retention's pass (src/services/retention.ts) over its ports in memory
 * (test/helpers/memory-retention.ts): a deployment of more agents than one tick visits, which would
 * take a Durable Object per agent on the real log (test/retention.test.ts runs the pass on D1 and
 * the agents' objects). The last test holds the in-memory ports to the real adapter's answers.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { services } from '../../src/env.ts';
import { PRUNE_AGENTS_PER_TICK, pruneLog } from '../../src/services/retention.ts';
import { count, LOG_TABLES, logDb } from '../helpers/log.ts';
import { type MemoryRetention, memoryRetention } from '../helpers/memory-retention.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const NOW = '2026-06-30T12:00:00.000Z';
const TICK_MS = 10 * 60_000;
const daysAgo = (d: number) => new Date(Date.parse(NOW) - d * 86_400_000).toISOString();
const tickAt = (i: number) => new Date(Date.parse(NOW) + i * TICK_MS).toISOString();

/** An agent with `old` rows 40 days old and `fresh` rows 2 days old in every table of its log. */
function addAgent(memory: MemoryRetention, agent: string, old: number, fresh: number, days?: number): void {
  memory.addAgent(agent, days === undefined ? {} : { log_retention_days: days });
  const at = [...Array.from({ length: old }, () => daysAgo(40)), ...Array.from({ length: fresh }, () => daysAgo(2))];
  for (const table of ['turns', 'calls', 'outcomes', 'trace_tools'] as const) memory.addRows(agent, table, at);
}

describe('log retention over many agents', () => {
  it('visits a window of agents each tick, moving on, until every agent is inside its window', async () => {
    const memory = memoryRetention();
    const agents = Array.from({ length: 120 }, (_, i) => `agent-${String(i).padStart(3, '0')}`);
    for (const agent of agents) addAgent(memory, agent, 3, 2);
    const done = () => agents.filter((a) => memory.counts(a).calls === 2).length;

    const first = await pruneLog(memory, tickAt(0));
    expect(first).toEqual({ removed: { turns: 150, calls: 150, outcomes: 150, trace_tools: 150 }, more: false });
    expect(done()).toBe(PRUNE_AGENTS_PER_TICK);
    await pruneLog(memory, tickAt(1));
    expect(done()).toBe(2 * PRUNE_AGENTS_PER_TICK);
    await pruneLog(memory, tickAt(2));
    expect(done()).toBe(120);

    for (const agent of agents) {
      expect(memory.counts(agent)).toEqual({ turns: 2, calls: 2, outcomes: 2, trace_tools: 2 });
      expect(memory.callsLogged(agent)).toBe(2);
    }
    // Nothing is left to remove: the next ticks remove nothing.
    expect(await pruneLog(memory, tickAt(3))).toEqual({
      removed: { turns: 0, calls: 0, outcomes: 0, trace_tools: 0 },
      more: false,
    });
  });

  it("keeps each agent's own window: 60 days keeps what 30 days removes, 1 day removes yesterday's", async () => {
    const memory = memoryRetention();
    addAgent(memory, 'long', 4, 3, 60);
    addAgent(memory, 'default', 4, 3);
    addAgent(memory, 'short', 4, 3, 1);
    expect(await pruneLog(memory, NOW)).toEqual({
      removed: { turns: 11, calls: 11, outcomes: 11, trace_tools: 11 },
      more: false,
    });
    expect([memory.counts('long').calls, memory.counts('default').calls, memory.counts('short').calls]).toEqual([
      7, 3, 0,
    ]);
    expect([memory.callsLogged('long'), memory.callsLogged('default'), memory.callsLogged('short')]).toEqual([7, 3, 0]);
  });

  it('takes a backlog larger than one batch in several batches of one tick, and stops at the budget', async () => {
    const memory = memoryRetention();
    addAgent(memory, 'backlog', 250, 5);
    addAgent(memory, 'next', 10, 0);
    // 100 rows a batch: 250 old rows of each table take three batches, all in one tick of 2,000 rows.
    expect(await pruneLog(memory, NOW, 2_000, 100)).toEqual({
      removed: { turns: 260, calls: 260, outcomes: 260, trace_tools: 260 },
      more: false,
    });
    expect(memory.counts('backlog')).toEqual({ turns: 5, calls: 5, outcomes: 5, trace_tools: 5 });

    // A budget of 400 rows (100 a table) leaves the rest to the next tick, and says so.
    const later = memoryRetention();
    addAgent(later, 'backlog', 250, 5);
    expect(await pruneLog(later, NOW, 400, 100)).toEqual({
      removed: { turns: 100, calls: 100, outcomes: 100, trace_tools: 100 },
      more: true,
    });
    expect(later.callsLogged('backlog')).toBe(155);
  });

  it('answers a prune as the real log does: oldest first, at most the limit per table, in the order of tables', async () => {
    const agent = agentId('retention-memory');
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [tool('t', 'A tool.')] } })).status).toBe(
      200,
    );
    const dates = [50, 2, 45, 20, 40].map(daysAgo);
    const memory = memoryRetention();
    memory.addAgent(agent);
    for (const table of LOG_TABLES) memory.addRows(agent, table, dates);
    await logDb(agent).batch(
      dates.flatMap((at, i) => [
        logDb(agent)
          .prepare(
            "INSERT INTO turns (turn_id, agent, request, conversation_id, routed, offered, source, created_at) VALUES (?1, ?2, 'r', NULL, 1, '[]', 'route', ?3)",
          )
          .bind(`t${i}`, agent, at),
        logDb(agent)
          .prepare(
            "INSERT INTO calls (agent, call_id, tool, arguments, success, error, request, turn_id, conversation_id, at) VALUES (?1, ?2, 't', '{}', 1, NULL, NULL, ?3, NULL, ?4)",
          )
          .bind(agent, `c${i}`, `t${i}`, at),
        logDb(agent)
          .prepare('INSERT INTO outcomes (agent, turn_id, ok, served_by, at) VALUES (?1, ?2, 1, NULL, ?3)')
          .bind(agent, `t${i}`, at),
        logDb(agent)
          .prepare("INSERT INTO trace_tools (agent, name, definition, seen_at) VALUES (?1, ?2, '{}', ?3)")
          .bind(agent, `tool_${i}`, at),
      ]),
    );
    const real = services(env).retention;
    expect(memory.retention.tables).toEqual(real.tables);
    const cutoff = daysAgo(30);
    for (const expected of [2, 1, 0]) {
      const answers = [await real.prune(agent, cutoff, 2), await memory.retention.prune(agent, cutoff, 2)];
      expect(answers).toEqual([Array(4).fill(expected), Array(4).fill(expected)]);
    }
    for (const table of LOG_TABLES) expect(await count(table, agent)).toBe(memory.counts(agent)[table]);
    const oldest = await logDb(agent).prepare('SELECT MIN(at) AS at FROM calls WHERE agent = ?1').bind(agent).first();
    expect(oldest).toEqual({ at: daysAgo(20) });
  });
});
