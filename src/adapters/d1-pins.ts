/** The D1 adapter for pinned tools (the `pins` table, docs/tool-delivery.md). */
import type { Pin, PinStore } from '../core/ports.ts';

export function createD1Pins(db: D1Database): PinStore {
  return {
    async pinned(agent) {
      const rows = await db.prepare('SELECT tool FROM pins WHERE agent = ?').bind(agent).all<{ tool: string }>();
      return new Set(rows.results.map((r) => r.tool));
    },

    async list(agent) {
      const rows = await db
        .prepare('SELECT tool, pinned_at, pinned_by FROM pins WHERE agent = ? ORDER BY tool')
        .bind(agent)
        .all<Pin>();
      return rows.results;
    },

    async pin(agent, tool, at, by) {
      await db
        .prepare(
          'INSERT INTO pins (agent, tool, pinned_at, pinned_by) VALUES (?, ?, ?, ?) ON CONFLICT (agent, tool) DO NOTHING',
        )
        .bind(agent, tool, at, by)
        .run();
    },

    async unpin(agent, tool) {
      const res = await db.prepare('DELETE FROM pins WHERE agent = ? AND tool = ?').bind(agent, tool).run();
      return res.meta.changes > 0;
    },
  };
}
