/**
 * Log retention's ports in memory, for service tests where a Durable Object per agent would cost
 * more than the rule under test. They keep the rules of the real adapters: agents listed by name
 * with their settings as JSON text; `prune` removes the agent's rows dated strictly before the
 * cutoff, oldest first, at most `limit` per table, and answers the counts in the order of `tables`
 * (src/adapters/log-retention.ts); the agent list's call count never goes below 0
 * (src/adapters/d1-revisions.ts `noteCallsPruned`).
 */
import type { RetentionStore } from '../../src/core/ports.ts';
import type { RetentionPorts } from '../../src/services/retention.ts';
import type { SettingsPatch } from '../../src/schemas.ts';
import { LOG_TABLES } from './log.ts';

type LogTable = (typeof LOG_TABLES)[number];

interface MemoryAgent {
  settings: SettingsPatch;
  /** Each table's rows, as the times that date them. */
  rows: Record<LogTable, string[]>;
  /** The agent list's count of logged calls. */
  callsLogged: number;
}

/** Retention's ports over agents held in memory, and what a test reads back. */
export interface MemoryRetention extends RetentionPorts {
  /** Adds an agent (its settings as a PUT …/config leaves them) with no rows. */
  addAgent(agent: string, settings?: SettingsPatch): void;
  /** Logs rows dated `at` in `table`, one per time; calls also count in the agent list. */
  addRows(agent: string, table: LogTable, at: readonly string[]): void;
  /** How many rows each table holds for the agent. */
  counts(agent: string): Record<LogTable, number>;
  /** The agent list's count of the agent's logged calls. */
  callsLogged(agent: string): number;
}

export function memoryRetention(): MemoryRetention {
  const agents = new Map<string, MemoryAgent>();
  const agentOf = (agent: string): MemoryAgent => {
    const found = agents.get(agent);
    if (!found) throw new Error(`no agent ${agent} in memory`);
    return found;
  };

  const retention: RetentionStore = {
    tables: LOG_TABLES,
    async agents() {
      return [...agents.keys()].sort().map((agent) => ({ agent, settings: JSON.stringify(agentOf(agent).settings) }));
    },
    async prune(agent, cutoff, limit) {
      const rows = agents.get(agent)?.rows;
      return LOG_TABLES.map((table) => {
        if (!rows) return 0;
        const sorted = [...rows[table]].sort();
        const removed = sorted.filter((at) => at < cutoff).slice(0, limit);
        rows[table] = sorted.slice(removed.length);
        return removed.length;
      });
    },
  };

  return {
    retention,
    revisions: {
      async noteCallsPruned(agent, removed) {
        const a = agents.get(agent);
        if (a) a.callsLogged = Math.max(0, a.callsLogged - removed);
      },
    },
    addAgent(agent, settings = {}) {
      agents.set(agent, { settings, rows: { turns: [], calls: [], outcomes: [], trace_tools: [] }, callsLogged: 0 });
    },
    addRows(agent, table, at) {
      const a = agentOf(agent);
      a.rows[table].push(...at);
      if (table === 'calls') a.callsLogged += at.length;
    },
    counts(agent) {
      const { rows } = agentOf(agent);
      return {
        turns: rows.turns.length,
        calls: rows.calls.length,
        outcomes: rows.outcomes.length,
        trace_tools: rows.trace_tools.length,
      };
    },
    callsLogged: (agent) => agentOf(agent).callsLogged,
  };
}
