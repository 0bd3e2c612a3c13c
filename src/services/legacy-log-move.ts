/**
 * Moving a log kept in D1 (before the log moved to each agent's Durable Object) into the agents'
 * objects, a bounded share each scheduled tick, oldest rows first, so an upgraded deployment loses
 * nothing (docs/capacity.md "Where the log lives"). A fresh deployment has nothing to move: one
 * empty read per table a tick.
 */
import type { LegacyTable } from '../core/ports.ts';
import type { Services } from '../env.ts';

/** Rows one tick moves in all (a quarter per table, at most). */
export const LEGACY_ROWS_PER_TICK = 4_000;

export interface LegacyMoveTick {
  moved: Record<LegacyTable, number>;
  /** True when a table still had rows: the next tick goes on. */
  more: boolean;
}

/** Moves up to `budget` of the oldest D1 log rows into their agents' logs. */
export async function moveLegacyLog(svc: Services, budget = LEGACY_ROWS_PER_TICK): Promise<LegacyMoveTick> {
  const tables = svc.legacyLog.tables;
  const share = Math.max(1, Math.floor(budget / tables.length));
  const moved = {} as Record<LegacyTable, number>;
  let more = false;
  for (const table of tables) {
    moved[table] = await svc.legacyLog.move(table, share);
    more ||= moved[table] >= share;
  }
  return { moved, more };
}
