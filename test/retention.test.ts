/**
 * Log retention through the scheduled handler's pass (src/services/retention.ts) on each agent's
 * real Durable Object log:
 * exactly the rows older than the window go, across ticks, and revisions keep their evidence.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { services } from '../src/env.ts';
import { pruneLog } from '../src/services/retention.ts';
import { count, logDb } from './helpers/log.ts';
import { agentId, api } from './helpers/requests.ts';
import { newRevision } from './helpers/revisions.ts';
import { tool } from './helpers/tools.ts';

const svc = services(env);
const NOW = '2026-06-30T12:00:00.000Z';
const daysAgo = (d: number) => new Date(Date.parse(NOW) - d * 86_400_000).toISOString();

/** `old` rows 40 days old and `fresh` rows 2 days old in turns, calls, outcomes and trace_tools. */
async function agentWithLog(old: number, fresh: number): Promise<string> {
  const agent = agentId('retention');
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [tool('t', 'A tool.')] } })).status).toBe(200);
  const rows = [...Array.from({ length: old }, () => daysAgo(40)), ...Array.from({ length: fresh }, () => daysAgo(2))];
  const statements = rows.flatMap((at, i) => [
    logDb(agent)
      .prepare(
        "INSERT INTO turns (turn_id, agent, request, conversation_id, routed, offered, source, created_at) VALUES (?1, ?2, 'r', NULL, 1, '[]', 'route', ?3)",
      )
      .bind(`${agent}-t${i}`, agent, at),
    logDb(agent)
      .prepare(
        "INSERT INTO calls (agent, call_id, tool, arguments, success, error, request, turn_id, conversation_id, at) VALUES (?1, ?2, 't', '{}', 1, NULL, NULL, ?3, NULL, ?4)",
      )
      .bind(agent, `${agent}-c${i}`, `${agent}-t${i}`, at),
    logDb(agent)
      .prepare('INSERT INTO outcomes (agent, turn_id, ok, served_by, at) VALUES (?1, ?2, 1, NULL, ?3)')
      .bind(agent, `${agent}-t${i}`, at),
    logDb(agent)
      .prepare("INSERT INTO trace_tools (agent, name, definition, seen_at) VALUES (?1, ?2, '{}', ?3)")
      .bind(agent, `tool_${i}`, at),
  ]);
  for (let i = 0; i < statements.length; i += 400) await logDb(agent).batch(statements.slice(i, i + 400));
  return agent;
}

const counts = async (agent: string) => ({
  turns: await count('turns', agent),
  calls: await count('calls', agent),
  outcomes: await count('outcomes', agent),
  trace_tools: await count('trace_tools', agent),
});

describe('log retention', () => {
  it('removes exactly what is older than the window, in bounded ticks, and nothing of another agent', async () => {
    const agent = await agentWithLog(250, 30);
    const other = await agentWithLog(0, 30);
    expect((await api('PUT', `/v1/agents/${agent}/config`, { body: { log_retention_days: 10 } })).status).toBe(200);
    const before = await counts(other);
    // A budget of 300 rows a tick, 100 a statement: 1,000 old rows take four ticks.
    const ticks = [];
    for (let i = 0; i < 6; i++) ticks.push(await pruneLog(svc, NOW, 300, 100));
    expect(ticks.map((t) => t.more)).toEqual([true, true, true, false, false, false]);
    expect(Object.values(ticks[0]?.removed ?? {}).reduce((a, b) => a + b, 0)).toBe(300);
    expect(await counts(agent)).toEqual({ turns: 30, calls: 30, outcomes: 30, trace_tools: 30 });
    expect(await counts(other)).toEqual(before);
  });

  it('keeps the agent list’s call count with the log: writes add, duplicates do not, pruning takes away', async () => {
    const agent = agentId('retention-count');
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [tool('t', 'A tool.')] } })).status).toBe(
      200,
    );
    const now = new Date().toISOString();
    const ago = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
    const calls = [
      { id: 'old-1', tool: 't', arguments: {}, success: true, at: ago(40) },
      { id: 'old-2', tool: 't', arguments: {}, success: false, error: 'boom', at: ago(40) },
      { id: 'new-1', tool: 't', arguments: {}, success: true, at: ago(1) },
    ];
    expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).body).toEqual({
      accepted: 3,
      duplicates: 0,
    });
    expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls: calls.slice(2) } })).body).toEqual({
      accepted: 0,
      duplicates: 1,
    });
    const listed = async () =>
      (await api('GET', '/v1/agents')).body.agents.find((a: { agent: string }) => a.agent === agent)?.calls;
    expect(await listed()).toBe(3);
    await pruneLog(svc, now);
    expect(await count('calls', agent)).toBe(1);
    expect(await listed()).toBe(1);
  });

  it('keeps a revision whole: its evidence is stored with it', async () => {
    const agent = await agentWithLog(3, 0);
    const id = `rev-keep-${agent}`;
    const evidence = [
      {
        evidence_id: `failed:${agent}-c0`,
        kind: 'failed_call' as const,
        tool: 't',
        text: 'boom',
        arguments: [],
        how: null,
        served_by: null,
        turn_id: null,
        call_id: `${agent}-c0`,
        at: daysAgo(40),
      },
    ];
    await svc.revisions.insertRevisions(
      agent,
      [newRevision('t', { revision_id: id, created_at: daysAgo(40), notes_added: ['A note.'], evidence })],
      null,
    );
    await pruneLog(svc, NOW);
    expect(await count('calls', agent)).toBe(0);
    const rev = await api('GET', `/v1/agents/${agent}/revisions/${id}`);
    expect(rev.body.evidence).toEqual(evidence);
  });

  it('takes log_retention_days from 1 to 365; anything else is a 400 that writes nothing', async () => {
    const agent = await agentWithLog(0, 0);
    for (const days of [0, 366, 1.5, '30']) {
      const res = await api('PUT', `/v1/agents/${agent}/config`, { body: { log_retention_days: days } });
      expect(res.status).toBe(400);
    }
    expect((await api('GET', `/v1/agents/${agent}/config`)).body.log_retention_days).toBe(30);
  });
});
