/**
 * No query of `/route`, `/calls`, key authentication, a review (with auto-apply), the quality
 * report or the cron pass reads the call log or the turns in full. The SQL is not copied here: the real services
 * run over a D1 binding and an agent namespace that record every statement they are given (with its
 * binds; the log's go to each agent's Durable Object), and each one is then planned with EXPLAIN
 * QUERY PLAN where it ran. A plan may not scan `calls` or `turns` (`SCAN calls`, with
 * or without an index: a full index scan reads the whole log too), nor seek them by agent alone
 * (`(agent=?)`: an agent's whole log) except for MIN/MAX(seq), which SQLite answers with one seek
 * to the end of the (agent, seq) range. Plans name a table by its alias (`SCAN c`), so the
 * aliases of `calls` and `turns` are read from the SQL.
 */
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { authenticate, mintKey } from '../../src/auth.ts';
import { runScheduledReviews } from '../../src/cron.ts';
import { services } from '../../src/env.ts';
import { recordCalls } from '../../src/services/calls.ts';
import { qualityOf, settleTick } from '../../src/services/quality-report.ts';
import { registerTools } from '../../src/services/registry.ts';
import { runReview } from '../../src/services/review.ts';
import { route } from '../../src/services/route-serving.ts';
import type { AgentObject } from '../../src/agent-object.ts';
import type { SqlStatement } from '../../src/adapters/log-db.ts';
import { interceptLog, logDb } from '../helpers/log.ts';
import { agentId } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

/** SQL text → the binds it was last run with, in D1. */
const seen = new Map<string, unknown[]>();
/** The same for the statements run in an agent's log (its Durable Object). */
const seenLog = new Map<string, unknown[]>();

/** An agent namespace whose objects record each log statement they are sent, then run it. */
function recordingAgents(ns: DurableObjectNamespace<AgentObject>): DurableObjectNamespace<AgentObject> {
  const note = (s: SqlStatement) => seenLog.set(s.sql, s.params);
  return interceptLog(ns, {
    query: (s, stub) => {
      note(s);
      return stub.logQuery(s);
    },
    batch: (list, stub) => {
      list.forEach(note);
      return stub.logBatch(list);
    },
  });
}

/** A D1 binding that records each statement's SQL and binds, then runs it on the test database. */
function recordingDb(db: D1Database): D1Database {
  const real = new WeakMap<object, D1PreparedStatement>();
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    if (!seen.has(sql)) seen.set(sql, []);
    const wrapped = {
      bind: (...values: unknown[]) => (seen.set(sql, values), wrap(stmt.bind(...values), sql)),
      first: (column?: string) => (column === undefined ? stmt.first() : stmt.first(column)),
      run: () => stmt.run(),
      all: () => stmt.all(),
      raw: (options?: { columnNames?: false }) => stmt.raw(options),
    };
    real.set(wrapped, stmt);
    return wrapped as unknown as D1PreparedStatement;
  };
  return {
    prepare: (sql: string) => wrap(db.prepare(sql), sql),
    batch: (statements: D1PreparedStatement[]) => db.batch(statements.map((s) => real.get(s) ?? s)),
    exec: (sql: string) => db.exec(sql),
    dump: () => db.dump(),
    withSession: () => db.withSession(),
  } as unknown as D1Database;
}

const now = () => new Date().toISOString();

/** Drives every flow once through the real services over the recording binding. */
async function runFlows(): Promise<void> {
  const svc = services({ ...env, DB: recordingDb(env.DB), AGENTS: recordingAgents(env.AGENTS) });
  const agent = agentId('plans');
  const tools = [
    tool('get_weather', 'Current weather and forecast for a city.', { city: { type: 'string' } }),
    tool('send_email', 'Send an email to a recipient.', { to: { type: 'string' } }),
    tool('convert_currency', 'Convert money between currencies.', { amount: { type: 'number' } }),
  ];
  await registerTools(svc, agent, tools, false, now());
  const later: Promise<unknown>[] = [];
  const turns: string[] = [];
  for (const [i, request] of [
    'will it rain in Oslo',
    'rain tomorrow in Oslo?',
    'email my boss',
    'convert 20 dollars',
  ].entries()) {
    turns.push(
      (await route(svc, agent, { request, conversation_id: `c${i >> 1}` }, now(), (p) => later.push(p))).turn_id,
    );
  }
  await Promise.all(later);
  const calls = turns.flatMap((turn_id, i) => [
    {
      id: `f${i}`,
      tool: 'get_weather',
      arguments: { city: 'Oslo' },
      success: false,
      error: 'unknown city name',
      request: 'weather in Oslo',
      turn_id,
      conversation_id: `c${i >> 1}`,
    },
    {
      id: `s${i}`,
      tool: i < 2 ? 'get_weather' : 'send_email',
      arguments: { city: 'Oslo' },
      success: true,
      request: 'weather in Oslo',
      turn_id,
      conversation_id: `c${i >> 1}`,
    },
    {
      id: `n${i}`,
      tool: 'convert_currency',
      arguments: { amount: 3 },
      success: i % 2 === 0,
      error: i % 2 === 0 ? null : 'bad amount',
      conversation_id: `c${i >> 1}`,
    },
  ]);
  await recordCalls(svc, agent, calls, now());
  await runReview(
    svc,
    agent,
    { dry_run: false, auto_apply: true, config: { min_calls: 1, min_failures: 1, min_misses: 1, min_confusions: 1 } },
    now(),
    'api',
  );
  await runReview(svc, agent, { dry_run: true }, now(), 'api');
  await runScheduledReviews(svc, now());
  await svc.log.windowLog(agent, new Date(Date.now() - 86_400_000).toISOString(), 1000);
  // The quality report settles hours (here: those of a clock three hours on), then reads them.
  const threeHoursOn = new Date(Date.now() + 3 * 3_600_000).toISOString();
  await settleTick(svc, threeHoursOn);
  await qualityOf(
    svc,
    agent,
    { days: 30 },
    [{ revision_id: 'r', tool: 'send_email', applied_at: now(), undone_at: null }],
    threeHoursOn,
  );
  await qualityOf(svc, agent, { days: 30, tool: 'send_email' }, [], threeHoursOn);
  const key = await mintKey();
  await svc.store.insertKey(
    { key_id: key.key_id, agent, role: 'agent', salt: key.salt, hash: key.hash, revoked_at: null },
    now(),
  );
  await authenticate(`Bearer ${key.key}`, env.ADMIN_TOKEN, svc.store);
}

/** The plan of a statement where it ran: D1, or an agent's log (`log`). */
async function plan(sql: string, binds: unknown[], log = false): Promise<string[]> {
  const db = log ? logDb(agentId('plans')) : env.DB;
  const { results } = await db
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...(binds as (string | number | null)[]))
    .all<{ detail: string }>();
  return results.map((r) => r.detail);
}

/** Every recorded statement with where it ran. */
const recorded = (): [string, unknown[], boolean][] => [
  ...[...seen].map(([sql, binds]) => [sql, binds, false] as [string, unknown[], boolean]),
  ...[...seenLog].map(([sql, binds]) => [sql, binds, true] as [string, unknown[], boolean]),
];

const NOT_AN_ALIAS = new Set([
  'WHERE',
  'ON',
  'JOIN',
  'CROSS',
  'LEFT',
  'INNER',
  'ORDER',
  'GROUP',
  'LIMIT',
  'USING',
  'SET',
  'VALUES',
]);

/** The names a statement gives `calls` and `turns` (the table names themselves included). */
function logAliases(sql: string): Set<string> {
  const aliases = new Set(['calls', 'turns']);
  for (const m of sql.matchAll(/\b(?:FROM|JOIN)\s+(?:calls|turns)\s+(?:AS\s+)?(\w+)/gi)) {
    const alias = m[1] ?? '';
    if (!NOT_AN_ALIAS.has(alias.toUpperCase())) aliases.add(alias);
  }
  return aliases;
}

/** Aliases whose only agent-wide seek is a MIN/MAX(seq): one seek, bounded. */
function minMaxAliases(sql: string): Set<string> {
  const found = new Set<string>();
  for (const m of sql.matchAll(/\b(?:MIN|MAX)\(\s*(?:(\w+)\.)?seq\s*\)/gi)) found.add(m[1] ?? '');
  return found;
}

/** Plan lines that read the call log or the turns in full, or a whole agent's share of them. */
function unbounded(sql: string, lines: readonly string[]): string[] {
  const aliases = logAliases(sql);
  const minMax = minMaxAliases(sql);
  return lines.filter((line) => {
    const m = /^(SCAN|SEARCH) (\w+)\b/.exec(line);
    const alias = m?.[2] ?? '';
    if (!m || !aliases.has(alias)) return false;
    if (m[1] === 'SCAN') return true;
    const agentWide = /\(agent=\?\)$/.test(line);
    return (
      agentWide &&
      !minMax.has(alias) &&
      !(minMax.has('') && (alias === 'calls' || alias === 'turns')) &&
      !newestFirst(sql, lines)
    );
  });
}

/**
 * `ORDER BY seq DESC LIMIT n` over the (agent, seq) index, with no sort step: SQLite walks the
 * agent's range from its end and stops after n rows, so the read is bounded by n.
 */
function newestFirst(sql: string, lines: readonly string[]): boolean {
  return /ORDER BY seq DESC LIMIT \?\d/.test(sql) && !lines.some((l) => /TEMP B-TREE/.test(l));
}

describe('the plan check itself', () => {
  it('flags scans and agent-wide seeks of the log by table or alias, and lets MIN/MAX(seq) seeks pass', () => {
    expect(unbounded('SELECT * FROM calls c WHERE c.tool = ?1', ['SCAN c'])).toEqual(['SCAN c']);
    expect(
      unbounded('SELECT COUNT(*) FROM turns WHERE agent = ?1', [
        'SEARCH turns USING COVERING INDEX turns_agent_seq (agent=?)',
      ]),
    ).toHaveLength(1);
    expect(
      unbounded('SELECT * FROM calls WHERE agent = ?1 ORDER BY seq DESC LIMIT ?2', [
        'SEARCH calls USING INDEX calls_agent_seq (agent=?)',
      ]),
    ).toEqual([]);
    expect(
      unbounded('SELECT * FROM calls WHERE agent = ?1 ORDER BY at DESC LIMIT ?2', [
        'SEARCH calls USING INDEX calls_agent_seq (agent=?)',
        'USE TEMP B-TREE FOR ORDER BY',
      ]),
    ).toHaveLength(1);
    expect(
      unbounded('SELECT MAX(seq) AS seq FROM calls WHERE agent = ?1', [
        'SEARCH calls USING COVERING INDEX calls_agent_seq (agent=?)',
      ]),
    ).toEqual([]);
    expect(
      unbounded('SELECT (SELECT MAX(c.seq) FROM calls c WHERE c.agent = a.agent) FROM agents a', [
        'SCAN a',
        'SEARCH c USING COVERING INDEX calls_agent_seq (agent=?)',
      ]),
    ).toEqual([]);
    expect(
      unbounded('SELECT * FROM tools WHERE agent = ?1', [
        'SEARCH tools USING INDEX sqlite_autoindex_tools_1 (agent=?)',
      ]),
    ).toEqual([]);
  });
});

describe('query plans of the route, the call log, reviews and the cron pass', () => {
  beforeAll(runFlows, 60_000);

  it('recorded the statements of every flow, the log reads among them', () => {
    const all = recorded()
      .map(([sql]) => sql)
      .join('\n');
    for (const table of [
      'FROM agents',
      'FROM tools',
      'INSERT INTO turns',
      'INSERT INTO calls',
      'FROM calls',
      'FROM turns',
      'FROM keys',
      'INSERT INTO quality_hours',
      'FROM quality_hours',
      'FROM quality_pairs',
    ]) {
      expect(all).toContain(table);
    }
  });

  it('plans no statement that reads calls or turns unbounded', async () => {
    const offenders: { sql: string; lines: string[] }[] = [];
    for (const [sql, binds, log] of recorded()) {
      const lines = await plan(sql, binds, log);
      if (unbounded(sql, lines).length > 0) offenders.push({ sql: sql.replace(/\s+/g, ' ').trim(), lines });
    }
    expect(offenders).toEqual([]);
  });

  it('reads the settled quality hours by index only: no scan of quality_hours or quality_pairs', async () => {
    const scans: { sql: string; lines: string[] }[] = [];
    for (const [sql, binds] of seen) {
      if (!/quality_(hours|pairs)/.test(sql)) continue;
      const lines = await plan(sql, binds);
      if (lines.some((l) => /^SCAN quality_/.test(l))) scans.push({ sql: sql.replace(/\s+/g, ' ').trim(), lines });
    }
    expect(scans).toEqual([]);
  });
});
