/**
 * The agent row as `/route` reads it: its tools_gen keys the routing snapshot and its
 * settings give top_k and the stable-list rule. A D1 round trip per route would cost more than
 * the whole rest of the route, so the row is kept per isolate:
 *
 * - a write made through this isolate (tools, delete, settings: the tool store's `onAgentWrite`)
 *   drops the row at once, so the next route here reads it again;
 * - a write made through another isolate is seen within AGENT_ROW_TTL_MS: after that the row is
 *   read again before routing. Halfway through, a route refreshes it in `waitUntil`, so under
 *   steady traffic no route waits for D1;
 * - reads go through a Batcher: concurrent routes share one read, and a read always starts after
 *   the routes it serves arrived.
 */
import type { AgentRecord, ToolStore } from '../core/ports.ts';
import type { Services } from '../env.ts';
import { Batcher } from './batcher.ts';

/** How long a write made through another isolate may go unseen by this isolate's routes. */
export const AGENT_ROW_TTL_MS = 1_000;
/** Agents whose row an isolate keeps (a row is a few hundred bytes). */
const ROWS_PER_ISOLATE = 1_000;

interface CachedRow {
  row: AgentRecord;
  /** When the read that produced it was asked for (not when it answered: the older, the safer). */
  askedAt: number;
  refreshing: boolean;
}

interface StoreRows {
  rows: Map<string, CachedRow>;
  /** Moves on every write seen here; a read that started before a write must not be cached. */
  epochs: Map<string, number>;
}

const byStore = new WeakMap<ToolStore, StoreRows>();

/** The rows kept for one tool store; the first use subscribes them to the store's agent writes. */
function rowsOf(store: ToolStore): StoreRows {
  let cache = byStore.get(store);
  if (!cache) {
    const created: StoreRows = { rows: new Map(), epochs: new Map() };
    store.onAgentWrite((agent) => {
      created.rows.delete(agent);
      created.epochs.set(agent, (created.epochs.get(agent) ?? 0) + 1);
    });
    byStore.set(store, created);
    cache = created;
  }
  return cache;
}

interface AgentRead {
  svc: Services;
  agent: string;
}

/** One read per distinct (store, agent) of a batch. */
function readAgents(items: AgentRead[]): Promise<(AgentRecord | null)[]> {
  const reads = new Map<Services['store'], Map<string, Promise<AgentRecord | null>>>();
  return Promise.all(
    items.map(({ svc, agent }) => {
      const byAgent = reads.get(svc.store) ?? new Map<string, Promise<AgentRecord | null>>();
      reads.set(svc.store, byAgent);
      const read = byAgent.get(agent) ?? svc.store.getAgent(agent);
      byAgent.set(agent, read);
      return read;
    }),
  );
}

/** A batch led by a request the runtime cancelled never settles; reads are idempotent, so waiters retry after this. */
const READ_PATIENCE_MS = 2_000;
const agentReads = new Batcher<AgentRead, AgentRecord | null>(readAgents, { patienceMs: READ_PATIENCE_MS });

/** Reads the row from the store and keeps it, unless a write landed here while it was being read. */
async function readRow(svc: Services, agent: string, nowMs: number): Promise<AgentRecord | null> {
  const cache = rowsOf(svc.store);
  const epoch = cache.epochs.get(agent) ?? 0;
  const row = await agentReads.submit({ svc, agent });
  if (row && (cache.epochs.get(agent) ?? 0) === epoch) {
    cache.rows.delete(agent);
    cache.rows.set(agent, { row, askedAt: nowMs, refreshing: false });
    if (cache.rows.size > ROWS_PER_ISOLATE) cache.rows.delete(cache.rows.keys().next().value ?? '');
  }
  return row;
}

/**
 * The agent's row for routing, or null when there is none (never cached: an agent created
 * through another isolate is found by the next route). `waitUntil` carries the early refresh.
 */
export async function agentRow(
  svc: Services,
  agent: string,
  nowMs: number,
  waitUntil?: (p: Promise<unknown>) => void,
): Promise<AgentRecord | null> {
  const cached = rowsOf(svc.store).rows.get(agent);
  const age = cached ? nowMs - cached.askedAt : Infinity;
  if (!cached || age < 0 || age >= AGENT_ROW_TTL_MS) return readRow(svc, agent, nowMs);
  if (age >= AGENT_ROW_TTL_MS / 2 && !cached.refreshing && waitUntil) {
    cached.refreshing = true;
    waitUntil(
      readRow(svc, agent, nowMs).catch(() => {
        // The route was answered; the next one past the TTL reads again.
        cached.refreshing = false;
      }),
    );
  }
  return cached.row;
}
