/**
 * The writes `/route` makes after answering (docs/learning.md): the turn row and the offer counts,
 * both in the agent's Durable Object. They run in `waitUntil` and are group-committed per isolate:
 * the turns of a short window go out as one INSERT per agent with one offer-count RPC per agent, so
 * under load a turn costs a small share of a round trip instead of two round trips of its own. The
 * window only delays the writes (a review reads them later); the answer has already gone.
 */
import type { NewTurn } from '../core/ports.ts';
import type { Services } from '../env.ts';
import { Batcher } from './batcher.ts';

interface PendingTurn {
  svc: Services;
  agent: string;
  turn: NewTurn;
}

/**
 * Turns per group: at most a few KiB each (the stored request is capped), so one INSERT's JSON
 * parameter stays far under SQLite's limits, and one group never holds a request's waitUntil for long.
 */
const TURNS_PER_BATCH = 200;

interface AgentTurns {
  svc: Services;
  agent: string;
  turns: NewTurn[];
}

/** Writes one group: per agent one INSERT of its turns and one counting RPC, all at once. */
async function writeTurns(items: PendingTurn[]): Promise<void[]> {
  // Per deployment (its services) and agent: one isolate serves one deployment, tests may hold more.
  const groups = new Map<Services, Map<string, AgentTurns>>();
  for (const { svc, agent, turn } of items) {
    const agents = groups.get(svc) ?? new Map<string, AgentTurns>();
    groups.set(svc, agents);
    const group = agents.get(agent) ?? { svc, agent, turns: [] };
    agents.set(agent, group);
    group.turns.push(turn);
  }
  const writes: Promise<unknown>[] = [];
  for (const g of [...groups.values()].flatMap((agents) => [...agents.values()])) {
    writes.push(g.svc.log.writeTurns(g.agent, g.turns));
    // docs/learning.md: nothing is counted when the stable-list rule sent every tool.
    const routed = g.turns.filter((t) => t.routed).map((t) => t.offered.map((o) => o.name));
    if (routed.length > 0) writes.push(g.svc.offers.countTurns(g.agent, routed));
  }
  await Promise.all(writes);
  return items.map(() => undefined);
}

/**
 * The window a leader waits for more turns: at a few hundred routes a second it gathers dozens,
 * and a turn still reaches the log a fraction of a second after its answer.
 */
const LINGER_MS = 200;
/**
 * How long a turn waits on another request's group before writing itself. A group whose leader the
 * runtime cancelled never settles (seen under sustained load in `wrangler dev`: "the Workers
 * runtime canceled this request because … your Worker's code had hung"); without a limit every
 * later turn of the isolate queued behind it and none was ever written again — the learning log
 * stopped. A turn write is idempotent (TURN_UPSERT in src/adapters/log-turns.ts), so writing one again is safe; a
 * re-sent group may count its offers twice (flags only). Far above a normal group (≈ 0.1 s), under
 * the 30 s a waitUntil may run.
 */
const PATIENCE_MS = 5_000;
const turnWriter = new Batcher<PendingTurn, void>(writeTurns, {
  maxBatch: TURNS_PER_BATCH,
  lingerMs: LINGER_MS,
  patienceMs: PATIENCE_MS,
});

/** Turns of this isolate not yet stored, so a request that names one can wait for it. */
const pending = new Map<string, Promise<void>>();
const pendingKey = (agent: string, turnId: string): string => `${agent}\u0000${turnId}`;

/** Records a routed (or stable-list) turn; resolves once it is stored and counted. */
export function recordTurn(svc: Services, agent: string, turn: NewTurn): Promise<void> {
  const key = pendingKey(agent, turn.turn_id);
  const write = turnWriter.submit({ svc, agent, turn }).finally(() => pending.delete(key));
  pending.set(key, write);
  return write;
}

/**
 * Waits until a turn this isolate answered is stored (at most one write window). An outcome or a
 * trace may name a turn a moment after `/route` answered it, before the grouped write lands.
 */
export function turnWritten(agent: string, turnId: string): Promise<void> {
  return turnsWritten(agent, [turnId]);
}

/**
 * How long a request waits for turn writes other requests started. A group lands within one
 * window (LINGER_MS) under normal load; the wait is also bounded by a timer of this request's own,
 * because a request that only waits on promises another request settles is, to workerd, a hung
 * request (seen with `POST …/calls` naming a thousand turns under load: "the Workers runtime canceled
 * this request"). Past the bound the review reads what is stored, as before.
 */
const WAIT_FOR_WRITES_MS = 1_000;

async function boundedWait(writes: readonly Promise<void>[]): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, WAIT_FOR_WRITES_MS);
  });
  await Promise.race([Promise.all(writes.map((w) => w.catch(() => undefined))), bound]);
  clearTimeout(timer);
}

/** Waits (bounded) until the named turns this isolate answered are stored. */
export async function turnsWritten(agent: string, turnIds: readonly string[]): Promise<void> {
  const writes = turnIds.flatMap((t) => pending.get(pendingKey(agent, t)) ?? []);
  if (writes.length > 0) await boundedWait(writes);
}

/**
 * Waits until every turn of the agent this isolate answered is stored: a review started right after
 * `/route` and `POST …/calls` reads the turns of those calls, never the calls without their turn.
 */
export async function agentTurnsWritten(agent: string): Promise<void> {
  const prefix = pendingKey(agent, '');
  const writes = [...pending].flatMap(([key, write]) => (key.startsWith(prefix) ? [write] : []));
  if (writes.length > 0) await boundedWait(writes);
}
