/**
 * The writes `/route` makes after answering (SPEC §4): the turn row and the offer counts. They run
 * in `waitUntil` and are group-committed per isolate (issue #8): the turns of a short window go
 * out as one D1 batch with one offer-count RPC per agent, so under load a turn costs a small share
 * of a round trip instead of two round trips of its own. The window only delays the writes (a
 * review reads them later); the answer has already gone.
 */
import type { NewTurn } from '../adapters/d1-log.ts';
import type { Services } from '../env.ts';
import { Batcher } from './batcher.ts';

interface PendingTurn {
  svc: Services;
  agent: string;
  turn: NewTurn;
}

/**
 * Turns per D1 batch: ~8 bound values and at most a few KiB each, far under D1's per-batch limits,
 * and small enough that one batch never holds a request's waitUntil for long.
 */
const TURNS_PER_BATCH = 100;

/** Writes one group: a D1 batch of turn inserts per database, one counting RPC per agent. */
async function writeTurns(items: PendingTurn[]): Promise<void[]> {
  const byStore = new Map<Services['store'], D1PreparedStatement[]>();
  const byAgent = new Map<string, { svc: Services; turns: string[][] }>();
  for (const { svc, agent, turn } of items) {
    const statements = byStore.get(svc.store) ?? [];
    statements.push(svc.log.insertTurn(agent, turn));
    byStore.set(svc.store, statements);
    // SPEC §4: nothing is counted when the stable-list rule sent every tool.
    if (!turn.routed) continue;
    const counts = byAgent.get(agent) ?? { svc, turns: [] };
    counts.turns.push(turn.offered.map((o) => o.name));
    byAgent.set(agent, counts);
  }
  await Promise.all([
    ...[...byStore].map(([store, statements]) => store.db.batch(statements)),
    ...[...byAgent].map(([agent, c]) => c.svc.offers.countTurns(agent, c.turns)),
  ]);
  return items.map(() => undefined);
}

/** The window a leader waits for more turns: long enough to gather a busy isolate's routes. */
const LINGER_MS = 50;
const turnWriter = new Batcher<PendingTurn, void>(writeTurns, { maxBatch: TURNS_PER_BATCH, lingerMs: LINGER_MS });

/** Records a routed (or stable-list) turn; resolves once it is stored and counted. */
export function recordTurn(svc: Services, agent: string, turn: NewTurn): Promise<void> {
  return turnWriter.submit({ svc, agent, turn });
}
