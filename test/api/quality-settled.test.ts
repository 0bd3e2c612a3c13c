/**
 * Routing quality from settled hours (src/services/quality-report.ts) on real local D1: a report that sums
 * stored hours plus a live tail answers exactly what counting the whole log at once answers — at any
 * cursor, for the agent and for one tool — and keeps answering it once the log is gone.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { qualityReport, type RevisionWindow } from '../../src/core/quality-math.ts';
import { services } from '../../src/env.ts';
import { settleQuality, settleTick } from '../../src/services/quality-report.ts';
import { logDb } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const svc = services(env);
const HOUR = 3_600_000;
/** The start of the current hour, `h` hours back, plus `m` minutes. */
const at = (h: number, m = 0) => new Date(Math.floor(Date.now() / HOUR) * HOUR - h * HOUR + m * 60_000).toISOString();

const turn = (agent: string, id: string, when: string, request: string, offered: string[], conversation?: string) =>
  logDb(agent)
    .prepare(
      "INSERT INTO turns (agent, turn_id, request, conversation_id, routed, offered, source, created_at) VALUES (?1, ?2, ?3, ?4, 1, ?5, 'route', ?6)",
    )
    .bind(
      agent,
      id,
      request,
      conversation ?? null,
      JSON.stringify(offered.map((name, i) => ({ name, rank: i + 1, score: 1 - i / 10 }))),
      when,
    );
const call = (
  agent: string,
  id: string,
  name: string,
  when: string,
  extra: { turn?: string; ok?: boolean; request?: string } = {},
) =>
  logDb(agent)
    .prepare(
      "INSERT INTO calls (agent, call_id, tool, arguments, success, error, request, turn_id, conversation_id, at) VALUES (?1, ?2, ?3, '{}', ?4, ?5, ?6, ?7, NULL, ?8)",
    )
    .bind(
      agent,
      id,
      name,
      extra.ok === false ? 0 : 1,
      extra.ok === false ? 'failed' : null,
      extra.request ?? null,
      extra.turn ?? null,
      when,
    );

/**
 * Three days of log: hits and misses, a corrected request (a re-ask one minute later served by
 * another tool), a loose call, failed calls, a request an outcome says another tool served, a run
 * whose call lands in the next hour, a quiet day, and traffic in the current (unsettled) hour; a
 * revision applied and undone, and one still applied.
 */
async function agentWithLog(): Promise<{ agent: string; revisions: RevisionWindow[] }> {
  const agent = agentId('quality-settled');
  const tools = ['lookup', 'cancel', 'refund'].map((n) => tool(n, `The ${n} tool.`));
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } })).status).toBe(200);
  const revisions: RevisionWindow[] = [
    { revision_id: `${agent}-r1`, tool: 'cancel', applied_at: at(60, 0.5), undone_at: at(40, 10) },
    { revision_id: `${agent}-r2`, tool: 'refund', applied_at: at(54, 5), undone_at: null },
  ];
  await logDb(agent).batch([
    turn(agent, 't1', at(62, 10), 'find my claim', ['lookup', 'cancel']),
    call(agent, 'c1', 'lookup', at(62, 11), { turn: 't1' }),
    turn(agent, 't2', at(62, 20), 'refund it', ['lookup', 'cancel']),
    call(agent, 'c2', 'refund', at(62, 21), { turn: 't2' }),
    turn(agent, 't3', at(60, 59), 'cancel my order', ['lookup'], 'k'),
    call(agent, 'c3', 'lookup', at(60, 59.5), { turn: 't3' }),
    turn(agent, 't4', at(59, 0.5), 'cancel the order please', ['lookup', 'cancel'], 'k'),
    call(agent, 'c4', 'cancel', at(59, 1), { turn: 't4' }),
    call(agent, 'c5', 'refund', at(57, 0), { request: 'refund that order' }),
    call(agent, 'c6', 'refund', at(56, 0), { ok: false }),
    turn(agent, 't5', at(52, 59.9), 'where is my refund', ['refund', 'lookup']),
    call(agent, 'c7', 'refund', at(51, 0.2), { turn: 't5' }),
    turn(agent, 't6', at(30, 5), 'refund please', ['lookup', 'refund']),
    call(agent, 'c8', 'lookup', at(30, 6), { turn: 't6' }),
    logDb(agent)
      .prepare("INSERT INTO outcomes (agent, turn_id, ok, served_by, at) VALUES (?1, 't6', 0, 'refund', ?2)")
      .bind(agent, at(30, 7)),
    turn(agent, 't7', at(0, 1), 'cancel it now', ['cancel']),
    call(agent, 'c9', 'cancel', at(0, 1.5), { turn: 't7' }),
  ]);
  await env.DB.batch(
    revisions.map((r) =>
      env.DB.prepare(
        "INSERT INTO revisions (revision_id, agent, tool, status, created_at, applied_at, body, undone_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5, '{}', ?6)",
      ).bind(r.revision_id, agent, r.tool, r.undone_at ? 'undone' : 'applied', r.applied_at, r.undone_at),
    ),
  );
  return { agent, revisions };
}

/** The API's report next to the whole log counted at once, with the same date (retried across midnight). */
async function reportAndTruth(agent: string, revisions: RevisionWindow[], query: { days: number; tool?: string }) {
  for (;;) {
    const day = new Date().toISOString().slice(0, 10);
    const res = await api(
      'GET',
      `/v1/agents/${agent}/quality?days=${query.days}${query.tool ? `&tool=${query.tool}` : ''}`,
    );
    expect(res.status).toBe(200);
    const now = new Date().toISOString();
    if (now.slice(0, 10) !== day) continue;
    const log = await svc.log.windowLog(agent, '2000', 50_000);
    // The report lists the revisions applied within its days.
    const windowStart = new Date(Date.parse(`${day}T00:00:00.000Z`) - (query.days - 1) * 86_400_000).toISOString();
    const inWindow = revisions.filter((r) => r.applied_at >= windowStart);
    const truth = qualityReport({ ...log, revisions: inWindow, days: query.days, now, tool: query.tool });
    // What approvers did comes from the revisions, not the log: the log's part is compared.
    const { approvals, ...fromLog } = res.body;
    expect(approvals).toMatchObject({ decided: expect.any(Number) });
    return { report: rounded(fromLog), truth: rounded({ ...truth, truncated: false }) };
  }
}

/** MRR to 12 places: stored hours sum 1/rank in another order than one pass over the log. */
function rounded<T extends { days: { mrr: number | null }[] }>(r: T): T {
  return { ...r, days: r.days.map((d) => ({ ...d, mrr: d.mrr === null ? null : Number(d.mrr.toFixed(12)) })) };
}

const settled = async (agent: string) =>
  (
    await env.DB.prepare('SELECT through FROM quality_settled WHERE agent = ?1')
      .bind(agent)
      .first<{ through: string }>()
  )?.through ?? null;

describe('routing quality from settled hours', () => {
  it('answers what counting the whole log answers, whatever has been settled, for the agent and one tool', async () => {
    const { agent, revisions } = await agentWithLog();
    // Each report settles a few steps first: three reports, three cursors.
    for (const query of [{ days: 4 }, { days: 4, tool: 'refund' }, { days: 3, tool: 'cancel' }]) {
      const { report, truth } = await reportAndTruth(agent, revisions, query);
      expect(report).toEqual(truth);
    }
    const { report } = await reportAndTruth(agent, revisions, { days: 4 });
    // The numbers a reader sees (checked once by hand against the log above).
    expect(report.days.reduce((n: number, d: { served_turns: number }) => n + d.served_turns, 0)).toBe(8);
    expect(report.top_confused).toEqual([
      { tool: 'lookup', served_by: 'cancel', count: 1 },
      { tool: 'lookup', served_by: 'refund', count: 1 },
    ]);
    expect(report.revisions.map((r: { before: unknown; after: unknown }) => [r.before, r.after])).toEqual([
      [
        { served_turns: 0, hits: 0 },
        { served_turns: 2, hits: 1 },
      ],
      [
        { served_turns: 2, hits: 0 },
        { served_turns: 2, hits: 2 },
      ],
    ]);
  });

  it('keeps answering from the stored hours once the log they were counted from is gone', async () => {
    const { agent, revisions } = await agentWithLog();
    await settleQuality(svc, agent, new Date().toISOString(), 1_000);
    const { truth } = await reportAndTruth(agent, revisions, { days: 4 });
    // Retention removes everything but the current hour's log.
    await logDb(agent).batch(
      ['turns', 'calls', 'outcomes'].map((t) =>
        logDb(agent)
          .prepare(`DELETE FROM ${t} WHERE agent = ?1 AND ${t === 'turns' ? 'created_at' : 'at'} < ?2`)
          .bind(agent, at(1)),
      ),
    );
    const { report } = await reportAndTruth(agent, revisions, { days: 4 });
    expect(report).toEqual(truth);
  });

  it('settles in the scheduled handler, tick by tick, every hour that ended an hour ago or more', async () => {
    const { agent } = await agentWithLog();
    expect(await settled(agent)).toBeNull();
    const now = new Date().toISOString();
    const first = await settleTick(svc, now);
    expect(first.hours).toBeGreaterThan(0);
    const cursor = await settled(agent);
    expect(cursor).not.toBeNull();
    // Every hour that ended an hour ago or more; the current and the last hour stay live.
    const target = new Date(Date.parse(now) - HOUR).toISOString().slice(0, 13);
    for (let i = 0; i < 20 && (await settled(agent)) !== target; i++) await settleTick(svc, now);
    expect(await settled(agent)).toBe(target);
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM quality_hours WHERE agent = ?1 AND tool = ''")
      .bind(agent)
      .first<{ n: number }>();
    // One agent-wide row per hour with traffic: t1/t2, t3, t4, c5, c6, t5, t6 (c7 joins t5's hour).
    expect(rows?.n).toBe(7);
  });

  it('stops settling once a budget of log rows is read; the next call goes on, and the report stays exact', async () => {
    const { agent, revisions } = await agentWithLog();
    const now = new Date().toISOString();
    const target = new Date(Date.parse(now) - HOUR).toISOString().slice(0, 13);
    // Unbounded steps, a budget of one row: each call reads one slice (its first step) and stops.
    const cursors: (string | null)[] = [];
    for (let i = 0; i < 30 && (await settled(agent)) !== target; i++) {
      const done = await settleQuality(svc, agent, now, 1_000, 1);
      expect(done.hours).toBeGreaterThan(0);
      cursors.push(await settled(agent));
    }
    expect(await settled(agent)).toBe(target);
    // Four steps of at most six hours over the log's 62 hours (hours without log passed over).
    expect(cursors.length).toBe(4);
    const { report, truth } = await reportAndTruth(agent, revisions, { days: 4 });
    expect(report).toEqual(truth);
  });
});
