import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { runUpstreamSyncs } from '../src/cron.ts';
import { services } from '../src/env.ts';
import { agentId, api } from './helpers/requests.ts';

const at = (ms: number) => new Date(ms).toISOString();

describe('cron re-sync of MCP upstreams', () => {
  it('retries a failing upstream only after its backoff, doubling it each time, and leaves a healthy schedule alone', async () => {
    const agent = agentId('cron-ups');
    const body = { url: 'http://127.0.0.1:9/mcp', timeout_ms: 1000 };
    expect((await api('PUT', `/v1/agents/${agent}/upstreams/gone`, { body })).status).toBe(200);
    const svc = services(env);
    const t0 = Date.now() + 1000;
    const id = `${agent}/gone`;
    const first = await runUpstreamSyncs(svc, at(t0));
    expect(first.failed.map((f) => f.upstream)).toContain(id);
    let row = await svc.upstreams.get(agent, 'gone');
    expect(row).toMatchObject({ status: 'failing', failures: 1, next_sync_at: at(t0 + 60_000) });
    expect(row?.last_error).toMatch(/^upstream gone: /);

    const early = await runUpstreamSyncs(svc, at(t0 + 30_000));
    expect(early.failed.map((f) => f.upstream)).not.toContain(id);
    expect((await svc.upstreams.get(agent, 'gone'))?.failures).toBe(1);

    await runUpstreamSyncs(svc, at(t0 + 61_000));
    row = await svc.upstreams.get(agent, 'gone');
    expect(row).toMatchObject({ failures: 2, next_sync_at: at(t0 + 61_000 + 120_000) });
  });
});
