import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createD1Store } from '../../src/adapters/d1-store.ts';
import type { Services } from '../../src/env.ts';
import { AGENT_ROW_TTL_MS, agentRow } from '../../src/services/agent-rows.ts';
import { agentId } from '../helpers/requests.ts';

/** A store over the test database that counts its agent-row reads. */
function countingServices() {
  const store = createD1Store(env.DB);
  const counter = { reads: 0 };
  const svc = {
    store: {
      ...store,
      getAgent: (agent: string) => {
        counter.reads += 1;
        return store.getAgent(agent);
      },
    },
  } as unknown as Services;
  return { svc, store, counter };
}

async function newAgent(store: ReturnType<typeof createD1Store>): Promise<string> {
  const agent = agentId();
  await store.ensureAgent(agent, '2026-01-01T00:00:00.000Z');
  return agent;
}

describe('agent rows kept per isolate for /route', () => {
  it('reads D1 once within the TTL, refreshes in waitUntil past half of it, and reads again past it', async () => {
    const { svc, store, counter } = countingServices();
    const agent = await newAgent(store);
    const t0 = 1_000_000;
    expect((await agentRow(svc, agent, t0))?.agent).toBe(agent);
    expect((await agentRow(svc, agent, t0 + 10))?.agent).toBe(agent);
    expect(counter.reads).toBe(1);

    const later: Promise<unknown>[] = [];
    expect((await agentRow(svc, agent, t0 + AGENT_ROW_TTL_MS / 2, (p) => later.push(p)))?.agent).toBe(agent);
    expect(later).toHaveLength(1);
    await Promise.all(later);
    expect(counter.reads).toBe(2);

    await agentRow(svc, agent, t0 + AGENT_ROW_TTL_MS / 2 + AGENT_ROW_TTL_MS);
    expect(counter.reads).toBe(3);
  });

  it('drops the row the moment a write through this isolate lands, whichever store made it', async () => {
    const { svc, store, counter } = countingServices();
    const agent = await newAgent(store);
    const now = 2_000_000;
    expect((await agentRow(svc, agent, now))?.settings).toEqual({});
    await createD1Store(env.DB).putSettings(agent, { top_k: 2 });
    expect((await agentRow(svc, agent, now + 1))?.settings).toEqual({ top_k: 2 });
    expect(counter.reads).toBe(2);
  });

  it('never keeps a missing agent: one created meanwhile is found by the next read', async () => {
    const { svc, store, counter } = countingServices();
    const agent = agentId();
    expect(await agentRow(svc, agent, 3_000_000)).toBeNull();
    await store.ensureAgent(agent, '2026-01-01T00:00:00.000Z');
    expect((await agentRow(svc, agent, 3_000_001))?.agent).toBe(agent);
    expect(counter.reads).toBe(2);
  });
});
