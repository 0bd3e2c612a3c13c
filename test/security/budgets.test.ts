/**
 * Budgets against amplification: an agent's model calls an hour (`model_calls_per_hour`, reviews
 * and augmentation together), its dry runs at once (DRY_RUN_SLOTS), its tools
 * (`max_registered_tools`), and a review lease sized to the review's work. Through the whole app,
 * with the real agent Durable Object.
 */
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, inject, it } from 'vitest';
import type { AgentObject } from '../../src/agent-object.ts';
import { app } from '../../src/app.ts';
import { DEFAULT_SETTINGS } from '../../src/schemas.ts';
import { DRY_RUN_SLOTS, REVIEW_LEASE_MS } from '../../src/services/review.ts';
import { ADMIN, agentId, api } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';
import { agentState } from './fixtures.ts';
import { interceptObject } from '../helpers/log.ts';

const TOOLS = ['alpha', 'bravo', 'charlie'].map((name) =>
  tool(name, `The ${name} tool: files a ${name} report.`, { ref: { type: 'string' } }),
);

/** An agent whose three tools failed 3, 2 and 1 times: a review with min_calls 1 calls the model for each. */
async function failingAgent(): Promise<string> {
  const agent = agentId('budget');
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: TOOLS } })).status).toBe(200);
  const calls = ['alpha', 'alpha', 'alpha', 'bravo', 'bravo', 'charlie'].map((name, i) => ({
    id: `f${i}`,
    tool: name,
    arguments: { ref: `${i}` },
    success: false,
    error: `ref must start with REF- for the ${name} report`,
  }));
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
  return agent;
}

const LOW = { min_calls: 1, min_failures: 1 };

describe('model_calls_per_hour', () => {
  it('is a setting: 500 by default, 0 to 1,000,000', async () => {
    expect(DEFAULT_SETTINGS.model_calls_per_hour).toBe(500);
    const agent = await failingAgent();
    expect((await api('GET', `/v1/agents/${agent}/config`)).body.model_calls_per_hour).toBe(500);
    const bad = await api('PUT', `/v1/agents/${agent}/config`, { body: { model_calls_per_hour: -1 } });
    expect([bad.status, bad.body.error.details[0].path]).toEqual([400, ['model_calls_per_hour']]);
  });

  it("a review makes at most what is left of the agent's hour; the tools past it are skipped and reviewed later", async () => {
    const agent = await failingAgent();
    await api('PUT', `/v1/agents/${agent}/config`, { body: { model_calls_per_hour: 2 } });
    const first = await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true, config: LOW } });
    expect(first.status).toBe(200);
    expect(first.body.model_calls).toBe(2);
    expect(first.body.skipped).toEqual([
      {
        tool: 'charlie',
        reason: "model_budget: the agent's 2 model calls an hour are used up; the next one in 30 min",
      },
    ]);
    // Dry runs count too: the hour is spent, so a real review makes no model call and stores no mark.
    const second = await api('POST', `/v1/agents/${agent}/reviews`, { body: { config: LOW } });
    expect(second.body.model_calls).toBe(0);
    expect(second.body.skipped.map((s: { tool: string }) => s.tool)).toEqual(['alpha', 'bravo', 'charlie']);
    expect(new Set(second.body.skipped.map((s: { reason: string }) => s.reason.split(';')[0]))).toEqual(
      new Set(["model_budget: the agent's 2 model calls an hour are used up"]),
    );
    // Raised, the same tools are reviewed: nothing was marked reviewed.
    await api('PUT', `/v1/agents/${agent}/config`, { body: { model_calls_per_hour: 100 } });
    const third = await api('POST', `/v1/agents/${agent}/reviews`, { body: { config: LOW } });
    expect(third.body.model_calls).toBe(3);
  });

  it('augmentation takes from the same hour: the tools past it register with their docstring and the reason', async () => {
    const agent = await failingAgent();
    await api('PUT', `/v1/agents/${agent}/config`, { body: { model_calls_per_hour: 2 } });
    const defs = ['delta', 'echo', 'foxtrot'].map((name) => tool(name, `The ${name} tool.`));
    const res = await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: defs, augment: true } });
    expect(res.status).toBe(200);
    expect(res.body.augmentation).toEqual([
      { name: 'delta', augmented: false, reason: 'model gave no reply (extractive)' },
      { name: 'echo', augmented: false, reason: 'model gave no reply (extractive)' },
      {
        name: 'foxtrot',
        augmented: false,
        reason: "model_budget: the agent's 2 model calls an hour are used up; the next one in 30 min",
      },
    ]);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['delta', 'echo', 'foxtrot']),
    );
  });
});

describe('dry runs at once', () => {
  it(`at most ${DRY_RUN_SLOTS} dry runs of one agent run at once: past them 409 conflict, no model call`, async () => {
    const agent = await failingAgent();
    const stub = env.AGENTS.get(env.AGENTS.idFromName(agent));
    // Two dry runs in flight (their slots held, as a running dry run holds one).
    for (let i = 0; i < DRY_RUN_SLOTS; i++)
      expect(await stub.acquireDryRun(`held-${i}`, Date.now(), 60_000, DRY_RUN_SLOTS)).toBe(true);
    const refused = await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true, config: LOW } });
    expect(refused).toMatchObject({
      status: 409,
      body: {
        error: {
          code: 'conflict',
          message: `agent ${agent} already has 2 dry-run reviews running, the most at once; try again when one has finished`,
          details: [],
        },
      },
    });
    // Nothing was taken from the hour by the refused run.
    const budget = await runInDurableObject(
      stub,
      (_o, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM rate WHERE principal = '*model_calls'").one()
          .n,
    );
    expect(budget).toBe(0);
    await stub.releaseDryRun('held-0');
    const ran = await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true, config: LOW } });
    expect([ran.status, ran.body.model_calls]).toEqual([200, 3]);
    // Its slot was given back: one free slot again.
    expect(await stub.acquireDryRun('after', Date.now(), 60_000, DRY_RUN_SLOTS)).toBe(true);
    expect(await stub.acquireDryRun('after-2', Date.now(), 60_000, DRY_RUN_SLOTS)).toBe(false);
  });

  it('a slot of a dry run that crashed expires like the lease', async () => {
    const stub = env.AGENTS.get(env.AGENTS.idFromName(agentId('budget-expiry')));
    expect(await stub.acquireDryRun('a', 1_000, 10, 1)).toBe(true);
    expect(await stub.acquireDryRun('b', 1_005, 10, 1)).toBe(false);
    expect(await stub.acquireDryRun('b', 1_010, 10, 1)).toBe(true);
  });
});

describe('the review lease is sized to the work', () => {
  /** The agent namespace with every acquireReviewLease's ttl recorded. */
  function recording(ttls: number[]): DurableObjectNamespace<AgentObject> {
    return interceptObject(env.AGENTS, (stub) => ({
      acquireReviewLease: (holder: string, nowMs: number, ttlMs: number) => {
        ttls.push(ttlMs);
        return stub.acquireReviewLease(holder, nowMs, ttlMs);
      },
    }));
  }

  it('max_tools model calls of a model with a 30 s deadline: the lease covers them all (4 at a time, 3 attempts each) and a margin', async () => {
    const agent = agentId('budget-lease');
    await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: TOOLS } });
    const ttls: number[] = [];
    const e = {
      ...env,
      AGENTS: recording(ttls),
      LLM: 'openai:lease-sizing',
      OPENAI_BASE_URL: `${inject('fakeOpenAI')}/v1`,
      OPENAI_API_KEY: 'test',
      LLM_TIMEOUT_MS: '30000',
    };
    for (const max_tools of [8, 100]) {
      const ctx = createExecutionContext();
      const res = await app.fetch(
        new Request(`http://whetstone.test/v1/agents/${agent}/reviews`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ config: { max_tools } }),
        }),
        e,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(200);
    }
    // 8 tools: 2 rounds × (3 × 30 s + 2 × 8 s) + 5 min = 512 s, under the 15-minute floor.
    // 100 tools: 25 rounds × 106 s + 5 min = 2,950 s — past the old fixed 15 minutes.
    expect(ttls).toEqual([REVIEW_LEASE_MS, 2_950_000]);
  });
});

describe('max_registered_tools', () => {
  it('is a setting, 10,000 by default (docs/capacity.md)', () => {
    expect(DEFAULT_SETTINGS.max_registered_tools).toBe(10_000);
  });

  it('a PUT …/tools that would pass it is a 400 naming both numbers, nothing written; re-registering is not adding', async () => {
    const agent = await failingAgent();
    await api('PUT', `/v1/agents/${agent}/config`, { body: { max_registered_tools: 4 } });
    const before = await agentState(agent);
    const two = ['delta', 'echo'].map((name) => tool(name, `The ${name} tool.`));
    const refused = await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [...TOOLS, ...two] } });
    expect(refused).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 'invalid_request',
          message: `agent ${agent} would hold 5 tools; its max_registered_tools allows 4`,
          details: [
            {
              code: 'too_many_tools',
              path: ['tools'],
              message: '3 tools are registered and this request adds 2; remove tools or raise max_registered_tools',
            },
          ],
        },
      },
    });
    expect(await agentState(agent)).toEqual(before);
    const changed = TOOLS.map((t) => ({ ...t, description: `${t.description} Changed.` }));
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [...changed, two[0]] } })).status).toBe(200);
    expect((await api('GET', `/v1/agents/${agent}/tools`)).body.tools).toHaveLength(4);
  });
});
