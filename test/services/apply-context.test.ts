/**
 * The applies of one auto-applied review share what they read (src/services/apply.ts
 * `ApplyContext`). Counted, not timed: how often the applies load every tool row with its vector,
 * read the recent log and embed its requests; and the rows they write equal those of the same
 * revisions applied one by one, each reading everything again.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { NewRevision } from '../../src/adapters/d1-revisions.ts';
import { services, type Services } from '../../src/env.ts';
import { applyContext, applyRevision } from '../../src/services/apply.ts';
import { eventually } from '../helpers/eventually.ts';
import { logDb } from '../helpers/log.ts';
import { agentId, api } from '../helpers/requests.ts';
import { newRevision } from '../helpers/revisions.ts';
import { APPLY_TOOLS, tool } from '../helpers/tools.ts';

const base = services(env);

const TOOLS = APPLY_TOOLS;

/** Requests the agent served, each by the tool named: the re-check routes them again. */
const SERVED: [string, string][] = [
  ['will it rain in Oslo tomorrow', 'get_weather'],
  ['email the adjuster the photos', 'send_email'],
  ['what is the status of claim CW-1', 'lookup_claim'],
  ['hand this big loss to the specialists', 'refer_llu'],
  ['recover the money from the other driver', 'start_recovery'],
  ['is it windy in Porto', 'get_weather'],
];

/** Examples proposed for four tools (one revision each). */
const PROPOSED: [string, string][] = [
  ['lookup_claim', 'pull up the FNOL for me'],
  ['start_recovery', 'claw back the overpayment'],
  ['refer_llu', 'send this to the LLU'],
  ['send_email', 'drop the broker a line'],
];

interface Counts {
  fullToolReads: number;
  logReads: number;
  embedded: string[];
}

/** The services with counters on the reads the shared context saves. */
function counting(): { svc: Services; counts: Counts } {
  const counts: Counts = { fullToolReads: 0, logReads: 0, embedded: [] };
  const svc: Services = {
    ...base,
    store: {
      ...base.store,
      listTools: (agent, opts) => {
        if (opts?.vectors !== false) counts.fullToolReads += 1;
        return base.store.listTools(agent, opts);
      },
    },
    log: {
      ...base.log,
      recentLog: (agent, limit) => {
        counts.logReads += 1;
        return base.log.recentLog(agent, limit);
      },
    },
    embedder: {
      ...base.embedder,
      embed: (texts) => {
        counts.embedded.push(...texts);
        return base.embedder.embed(texts);
      },
    },
  };
  return { svc, counts };
}

const revision = (name: string, text: string): NewRevision => newRevision(name, { queries_added: [text] });

/** An agent with the tools, a log of served requests and the four revisions proposed. */
async function setup(): Promise<{ agent: string; ids: string[] }> {
  const agent = agentId('apply-ctx');
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: TOOLS } })).status).toBe(200);
  const calls = [];
  for (const [i, [request, served]] of SERVED.entries()) {
    const routed = await api('POST', `/v1/agents/${agent}/route`, {
      body: { request, conversation_id: `c${i}` },
    });
    calls.push({ id: `call-${i}`, tool: served, arguments: {}, success: true, turn_id: routed.body.turn_id });
  }
  await eventually(async () => {
    const row = await logDb(agent)
      .prepare('SELECT COUNT(*) AS n FROM turns WHERE agent = ?1')
      .bind(agent)
      .first<{ n: number }>();
    return row?.n === SERVED.length ? true : undefined;
  });
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
  const revisions = PROPOSED.map(([name, text]) => revision(name, text));
  await base.revisions.insertRevisions(agent, revisions, null);
  return { agent, ids: revisions.map((r) => r.revision_id) };
}

const who = { approved_by: 'whetstone:tool_learning', actor: 'test' };
const now = () => new Date().toISOString();

/** What the applies left on the rows and the revisions, without ids and times. */
async function outcome(agent: string, ids: readonly string[]) {
  const rows = await base.store.listTools(agent);
  const revisions = await Promise.all(ids.map((id) => base.revisions.getRevision(agent, id)));
  return {
    rows: rows.map((r) => ({
      name: r.name,
      examples: r.examples.map((e) => e.text),
      vector: Array.from(r.vector ?? []),
    })),
    revisions: revisions.map((r) => ({
      status: r?.status,
      queries_added: r?.queries_added,
      queries_withdrawn: r?.queries_withdrawn,
      displaced: r?.displaced,
    })),
  };
}

describe('the applies of one review share their reads', () => {
  it('reads the rows and the recent log once and embeds each request once, and writes what separate applies write', async () => {
    const one = await setup();
    const apart = counting();
    for (const id of one.ids) await applyRevision(apart.svc, one.agent, id, who, now());
    // Today's cost of an apply on its own: every row and the log again, each request embedded again.
    expect(apart.counts.fullToolReads).toBe(PROPOSED.length);
    expect(apart.counts.logReads).toBe(PROPOSED.length);

    const two = await setup();
    const shared = counting();
    const ctx = applyContext();
    for (const id of two.ids) await applyRevision(shared.svc, two.agent, id, who, now(), ctx);
    expect(shared.counts.fullToolReads).toBe(1);
    expect(shared.counts.logReads).toBe(1);
    const requests = new Set(SERVED.map(([request]) => request));
    const recheckEmbeds = shared.counts.embedded.filter((t) => requests.has(t));
    expect(recheckEmbeds.length).toBeGreaterThan(0);
    expect(new Set(recheckEmbeds).size).toBe(recheckEmbeds.length);
    expect(apart.counts.embedded.filter((t) => requests.has(t)).length).toBeGreaterThan(recheckEmbeds.length);

    expect(await outcome(two.agent, two.ids)).toEqual(await outcome(one.agent, one.ids));
  });

  it('reads the rows again when a write other than its own applies moved the toolbox', async () => {
    const { agent, ids } = await setup();
    const { svc, counts } = counting();
    const ctx = applyContext();
    const [first, second] = ids;
    await applyRevision(svc, agent, first ?? '', who, now(), ctx);
    expect(counts.fullToolReads).toBe(1);
    const extra = tool('book_flight', 'Search and book airline flights.', { from: { type: 'string' } });
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [extra] } })).status).toBe(200);
    await applyRevision(svc, agent, second ?? '', who, now(), ctx);
    expect(counts.fullToolReads).toBe(2);
    expect(ctx.tools?.has('book_flight')).toBe(true);
  });
});
