/**
 * The review's log reads stay bounded (docs/learning.md max_calls_per_tool): every statement of
 * REVIEW_SQL is planned as index seeks in an agent's log (its Durable Object's SQLite) — no table
 * scan, and no index range on the agent alone (that would read the agent's whole log).
 */
import { describe, expect, it } from 'vitest';
import type { SqlValue } from '../../src/adapters/log-db.ts';
import { REVIEW_SQL } from '../../src/adapters/log-review-reads.ts';
import { logDb } from '../helpers/log.ts';
import { agentId } from '../helpers/requests.ts';

const BINDS: Record<keyof typeof REVIEW_SQL, SqlValue[]> = {
  toolActivity: ['a', 24, '[["t1",0],["t2",7]]'],
  recentCalls: ['a', '["t1","t2"]', 24],
  rankedFirstTurns: ['a', '["t1"]', 24],
  turnsById: ['a', '["turn-1"]'],
  neighbourTurns: ['a', '["turn-1"]'],
  neighbourCalls: ['a', '[1,2]'],
  callsOfTurns: ['a', '["turn-1"]', 50],
  outcomesOf: ['a', '["turn-1"]'],
};

async function plan(sql: string, binds: SqlValue[]): Promise<string[]> {
  const { results } = await logDb(agentId('plans'))
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...binds)
    .all<{ detail: string }>();
  return results.map((r) => r.detail);
}

describe('review reads (EXPLAIN QUERY PLAN)', () => {
  for (const [name, sql] of Object.entries(REVIEW_SQL) as [keyof typeof REVIEW_SQL, string][]) {
    it(`${name} seeks by index`, async () => {
      const lines = await plan(sql, BINDS[name]);
      expect(lines.length).toBeGreaterThan(0);
      const scans = lines.filter((l) => /^SCAN /.test(l) && !/VIRTUAL TABLE|^SCAN \(subquery/.test(l));
      const agentOnly = lines.filter((l) => /INDEX \w+ \(agent=\?\)$/.test(l) && !/tools/.test(l));
      expect({ scans, agentOnly, lines }).toEqual({ scans: [], agentOnly: [], lines });
    });
  }
});
