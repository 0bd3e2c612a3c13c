/**
 * Routing memory (docs/learning.md "Routing memory") through HTTP on real local D1 and the agent's
 * Durable Object: a review remembers the wordings each tool served as a revision of kind `memory`,
 * applied at once by default or held for a person, undone like any revision, and never holding a
 * personal value or reaching the model view.
 */
import { describe, expect, it } from 'vitest';
import { agentId, api, servedTogether } from '../helpers/requests.ts';
import { tool } from '../helpers/tools.ts';

const TOOLS = [
  tool('get_weather', 'Current weather and forecast for a city.', { city: { type: 'string' } }),
  tool('book_hotel', 'Book a hotel room in a city.', { city: { type: 'string' } }),
  tool('send_email', 'Send an email message to a recipient.', { to: { type: 'string' }, body: { type: 'string' } }),
  tool('lookup_order', 'Look up a shop order by its id: status, items, delivery date.', {
    order_id: { type: 'string' },
  }),
  tool('cancel_order', 'Cancel a shop order that has not shipped yet.', { order_id: { type: 'string' } }),
  tool('convert_currency', 'Convert an amount between two currencies.', { amount: { type: 'number' } }),
];

/** Words no tool's definition has: only memory can send them to get_weather. */
const WORDING = 'should I pack an umbrella and a warm coat';

async function setup(config: Record<string, unknown> = {}): Promise<string> {
  const agent = agentId('memory');
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: TOOLS } })).status).toBe(200);
  if (Object.keys(config).length > 0)
    expect((await api('PUT', `/v1/agents/${agent}/config`, { body: config })).status).toBe(200);
  return agent;
}

/** One routed turn in each conversation, served by one successful call of `name`: a wording routes from two. */
async function servedIn(agent: string, conversations: string[], request: string, name: string, args: object) {
  for (const c of conversations) await served(agent, c, request, name, args);
}

/** One routed turn in a conversation, served by one successful call of `served`. */
async function served(agent: string, conversation: string, request: string, name: string, args: object) {
  const res = await api('POST', `/v1/agents/${agent}/route`, {
    body: { request, k: 2, conversation_id: conversation },
  });
  expect(res.status).toBe(200);
  const body = {
    calls: [{ tool: name, arguments: args, success: true, turn_id: res.body.turn_id, conversation_id: conversation }],
  };
  expect((await api('POST', `/v1/agents/${agent}/calls`, { body })).status).toBe(200);
}

async function rankOf(agent: string, request: string, name: string): Promise<number | null> {
  const res = await api('POST', `/v1/agents/${agent}/route`, { body: { request, k: 6 } });
  expect(res.status).toBe(200);
  const hit = (res.body.tools as { name: string; rank: number }[]).find((t) => t.name === name);
  return hit?.rank ?? null;
}

const review = (agent: string) => api('POST', `/v1/agents/${agent}/reviews`, { body: {} });

/** A review answer's remembered wordings as [tool, wording] pairs, sorted. */
function memoryAdded(body: { memory?: { tool: string; memory: { added: string[] } }[] }): string[][] {
  return (body.memory ?? []).flatMap((r) => r.memory.added.map((text) => [r.tool, text])).sort();
}
const getTool = (agent: string, name: string) => api('GET', `/v1/agents/${agent}/tools/${name}`);

/** A tool's line of an agent export (NDJSON), its memory as stored. */
function exportedTool(ndjson: string, name: string) {
  return ndjson
    .split('\n')
    .map((l) =>
      l === ''
        ? null
        : (JSON.parse(l) as { type: string; name?: string; memory?: { pending?: string[]; together?: true }[] }),
    )
    .find((l) => l?.type === 'tool' && l.name === name);
}

describe('routing memory', () => {
  it('remembers a served wording as an applied memory revision; routing then finds the tool by it, the model view does not change', async () => {
    const agent = await setup();
    const viewBefore = (await getTool(agent, 'get_weather')).body.model_view;
    const before = await rankOf(agent, WORDING, 'get_weather');
    expect(before).not.toBe(1);
    await servedIn(agent, ['c1', 'c2'], WORDING, 'get_weather', { city: 'Oslo' });

    const res = await review(agent);
    expect(res.status).toBe(200);
    expect(res.body.memory).toHaveLength(1);
    const rev = res.body.memory[0];
    expect(rev).toMatchObject({
      tool: 'get_weather',
      kind: 'memory',
      status: 'applied',
      approved_by: 'whetstone:routing_memory',
      queries_added: [],
      notes_added: [],
      memory: { added: [WORDING], withdrawn: [], dropped: [] },
    });
    expect(rev.memory.runs).toEqual([
      expect.objectContaining({ together: false, wording: WORDING, conversation: 'c1' }),
      expect.objectContaining({ together: false, wording: WORDING, conversation: 'c2' }),
    ]);
    // The two misses may also propose an example request: a revision of lines, waiting for a person.
    expect(
      (res.body.revisions as { kind?: string; status: string }[]).map((r) => [r.kind, r.status]),
    ).not.toContainEqual(['memory', expect.anything()]);

    const row = await getTool(agent, 'get_weather');
    expect(row.body.memory).toEqual([WORDING]);
    expect(row.body.model_view).toEqual(viewBefore);
    expect(row.body.examples).toEqual([]);
    expect(await rankOf(agent, WORDING, 'get_weather')).toBe(1);

    // Listed with the agent's revisions like any other.
    const listed = await api('GET', `/v1/agents/${agent}/revisions?tool=get_weather`);
    expect(
      listed.body.revisions
        .filter((r: { kind?: string }) => r.kind === 'memory')
        .map((r: { revision_id: string }) => r.revision_id),
    ).toEqual([rev.revision_id]);

    // A second review has nothing new to remember.
    const again = await review(agent);
    expect(again.status).toBe(200);
    expect(again.body.memory).toBeUndefined();
  });

  it('keeps a wording one conversation asked pending, out of routing, until a later review sees it in another', async () => {
    const agent = await setup();
    const before = await rankOf(agent, WORDING, 'get_weather');
    await servedIn(agent, ['c1', 'c1'], WORDING, 'get_weather', { city: 'Oslo' });
    const first = await review(agent);
    expect(first.status).toBe(200);
    expect(first.body.memory[0]).toMatchObject({ status: 'applied', memory: { added: [WORDING] } });
    const waiting = await getTool(agent, 'get_weather');
    expect(waiting.body.memory).toBeUndefined();
    expect(waiting.body.memory_pending).toBe(1);
    expect(await rankOf(agent, WORDING, 'get_weather')).toBe(before);

    // A pending wording moves with the agent: an export imported elsewhere keeps it waiting.
    const exported = await api<string>('GET', `/v1/agents/${agent}/export`);
    // The row keeps a mark of each conversation, not its id: a tool row outlives the log.
    const row = exportedTool(exported.body, 'get_weather');
    expect(row?.memory?.[0]?.pending).toEqual([expect.stringMatching(/^[0-9a-f]{16}$/)]);
    const copy = agentId('memory-copy');
    const imported = await api('POST', `/v1/agents/${copy}/import`, {
      raw: exported.body,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(imported.status).toBe(200);
    expect((await getTool(copy, 'get_weather')).body).toMatchObject({ memory_pending: 1 });

    // Another conversation asks it in other words around the same ones: now it routes.
    await served(agent, 'c2', `hi, ${WORDING} today?`, 'get_weather', { city: 'Oslo' });
    expect((await review(agent)).status).toBe(200);
    const routed = await getTool(agent, 'get_weather');
    expect(routed.body.memory).toEqual([WORDING]);
    expect(routed.body.memory_pending).toBeUndefined();
    expect(await rankOf(agent, WORDING, 'get_weather')).toBe(1);
  });

  it('counts no conversation that went on to another tool in words that neither ask again nor follow up', async () => {
    const agent = await setup();
    // Each time get_weather answered, the user went on in unrelated words and book_hotel served
    // that: a new task, or a user who gave up on a wrong answer; the log cannot tell which.
    for (const c of ['c1', 'c2']) {
      await served(agent, c, WORDING, 'get_weather', { city: 'Oslo' });
      await served(agent, c, 'reserve me a bed for two nights', 'book_hotel', { city: 'Oslo' });
    }
    expect((await review(agent)).status).toBe(200);
    const unsettled = await getTool(agent, 'get_weather');
    expect(unsettled.body.memory).toBeUndefined();
    expect(unsettled.body.memory_pending).toBeUndefined();
    expect((await getTool(agent, 'book_hotel')).body.memory).toEqual(['reserve me a bed for two nights']);

    // A conversation that ends with the answer, or goes on with a follow-up, says the tool served it.
    await served(agent, 'c3', WORDING, 'get_weather', { city: 'Oslo' });
    await served(agent, 'c4', WORDING, 'get_weather', { city: 'Oslo' });
    await served(agent, 'c4', 'now book a hotel there too', 'book_hotel', { city: 'Oslo' });
    expect((await review(agent)).status).toBe(200);
    expect((await getTool(agent, 'get_weather')).body.memory).toEqual([WORDING]);
  });

  it('does not remember for one tool a wording another tool’s example request says', async () => {
    const claimed = 'find me somewhere to sleep near the station';
    const agent = agentId('memory');
    const tools = TOOLS.map((t) => (t.name === 'book_hotel' ? { ...t, examples: [claimed] } : t));
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } })).status).toBe(200);
    // The agent picks get_weather for it in two conversations, and nobody corrects it.
    await servedIn(agent, ['c1', 'c2'], `${claimed} tonight`, 'get_weather', { city: 'Oslo' });
    await servedIn(agent, ['c3', 'c4'], WORDING, 'get_weather', { city: 'Oslo' });
    const res = await review(agent);
    expect(res.status).toBe(200);
    expect(memoryAdded(res.body)).toEqual([['get_weather', WORDING]]);
    expect((await getTool(agent, 'get_weather')).body.memory).toEqual([WORDING]);
  });

  it('does not remember a wording the log credits to two tools, nor one another tool’s memory holds', async () => {
    const disputed = 'find me a place to stay by the old harbour';
    const hotel = 'a quiet room to sleep in near the central station';
    const agent = await setup();
    // The agent picks get_weather for it in two conversations; a third is served by book_hotel.
    await servedIn(agent, ['c1', 'c2'], disputed, 'get_weather', { city: 'Oslo' });
    await served(agent, 'c3', disputed, 'book_hotel', { city: 'Oslo' });
    await servedIn(agent, ['c4', 'c5'], WORDING, 'get_weather', { city: 'Oslo' });
    await servedIn(agent, ['c6', 'c7'], hotel, 'book_hotel', { city: 'Oslo' });
    const res = await review(agent);
    expect(res.status).toBe(200);
    expect(memoryAdded(res.body)).toEqual([
      ['book_hotel', hotel],
      ['get_weather', WORDING],
    ]);
    expect((await getTool(agent, 'get_weather')).body).toMatchObject({ memory: [WORDING] });
    expect((await getTool(agent, 'book_hotel')).body).toMatchObject({ memory: [hotel] });

    // Later the agent picks get_weather for what book_hotel's memory routes: it is not get_weather's.
    await servedIn(agent, ['c8', 'c9'], `${hotel} tonight`, 'get_weather', { city: 'Oslo' });
    const later = await review(agent);
    expect(later.status).toBe(200);
    expect(memoryAdded(later.body)).toEqual([]);
    expect((await getTool(agent, 'get_weather')).body).toMatchObject({ memory: [WORDING] });
  });

  it('remembers what a tool served alone though a request it served together with another tool says it too', async () => {
    const joined = `${WORDING}, and a quiet room near the central station`;
    const agent = await setup();
    // One request served by get_weather and book_hotel together: each holds it, pending.
    await servedTogether(agent, 'j1', joined, ['get_weather', 'book_hotel'], { city: 'Oslo' });
    const first = await review(agent);
    expect(first.status).toBe(200);
    expect(memoryAdded(first.body)).toEqual([
      ['book_hotel', joined],
      ['get_weather', joined],
    ]);
    // The row says the wording was served together, and an export imported elsewhere keeps it so.
    const exported = await api<string>('GET', `/v1/agents/${agent}/export`);
    const row = exportedTool(exported.body, 'get_weather');
    expect(row?.memory).toEqual([
      { text: joined, at: expect.any(Number), pending: [expect.any(String)], together: true },
    ]);
    const imported = await api('POST', `/v1/agents/${agentId('memory-copy')}/import`, {
      raw: exported.body,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(imported.status).toBe(200);

    // Later get_weather serves its part alone, in two conversations: book_hotel's copy of the joined
    // request holds those words, but get_weather served that request together with book_hotel: no
    // contest. Those conversations join the pending copy, which now routes.
    await servedIn(agent, ['c1', 'c2'], WORDING, 'get_weather', { city: 'Oslo' });
    const later = await review(agent);
    expect(later.status).toBe(200);
    const revisions = later.body.memory as { tool: string; status: string; memory: { runs: unknown[] } }[];
    expect(revisions.map((r) => [r.tool, r.status, r.memory.runs.length])).toEqual([['get_weather', 'applied', 2]]);
    expect((await getTool(agent, 'get_weather')).body).toMatchObject({ memory: [joined] });
    expect(await rankOf(agent, 'pack an umbrella and a warm coat?', 'get_weather')).toBe(1);
  });

  it('gives a tool that did something beside the one that served a request whole on its own nothing of it', async () => {
    // The agent checks the weather on the way to booking, in two conversations; in a third it books
    // straight away. The request joins two asks, but book_hotel alone served all of it.
    const joined = 'find me a quiet room near the central station and make sure it has parking';
    const agent = await setup();
    await servedTogether(agent, 'j1', joined, ['get_weather', 'book_hotel'], { city: 'Oslo' });
    await served(agent, 'c1', joined, 'book_hotel', { city: 'Oslo' });
    const first = await review(agent);
    expect(first.status).toBe(200);
    expect(memoryAdded(first.body)).toEqual([['book_hotel', joined]]);
    await servedTogether(agent, 'j2', joined, ['get_weather', 'book_hotel'], { city: 'Oslo' });
    expect((await review(agent)).status).toBe(200);
    const weather = (await getTool(agent, 'get_weather')).body;
    expect([weather.memory, weather.memory_pending]).toEqual([undefined, undefined]);
    expect((await getTool(agent, 'book_hotel')).body).toMatchObject({ memory: [joined] });
    expect(await rankOf(agent, joined, 'book_hotel')).toBe(1);
  });

  it('keeps a request served together waiting in later reviews, though a routed wording of the tool says part of it', async () => {
    const agent = await setup();
    await servedIn(agent, ['c1', 'c2'], WORDING, 'get_weather', { city: 'Oslo' });
    expect((await review(agent)).status).toBe(200);
    const joined = `${WORDING}, and a quiet room near the central station`;
    await servedTogether(agent, 'j1', joined, ['get_weather', 'book_hotel'], { city: 'Oslo' });
    expect((await review(agent)).status).toBe(200);
    // The next review brings get_weather another wording only: the joined request, from one
    // conversation, still waits for one of its own, and the hotel's words do not route to the weather.
    const windy = 'will it be windy on the ferry tomorrow';
    await servedIn(agent, ['c3', 'c4'], windy, 'get_weather', { city: 'Oslo' });
    expect((await review(agent)).status).toBe(200);
    const row = (await getTool(agent, 'get_weather')).body;
    expect(row.memory).toEqual([windy, WORDING]);
    expect(row.memory_pending).toBe(1);
  });

  it('holds no second copy of what the tool’s own example requests say: memory lets it go when an example comes to say it', async () => {
    // A registered example of get_weather is never remembered for it again.
    const own = 'is it going to snow in the mountains this weekend';
    const agent = agentId('memory');
    const tools = TOOLS.map((t) => (t.name === 'get_weather' ? { ...t, examples: [own] } : t));
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } })).status).toBe(200);
    await servedIn(agent, ['c1', 'c2'], `hello, ${own}?`, 'get_weather', { city: 'Oslo' });
    await servedIn(agent, ['c3', 'c4'], WORDING, 'get_weather', { city: 'Oslo' });
    const res = await review(agent);
    expect(res.status).toBe(200);
    expect(res.body.memory).toHaveLength(1);
    expect(res.body.memory[0].memory.added).toEqual([WORDING]);
    expect((await getTool(agent, 'get_weather')).body.memory).toEqual([WORDING]);

    // The misses on WORDING proposed it as an example too: applied, the example says it, memory lets its copy go.
    const lines = (res.body.revisions as { revision_id: string; tool: string; queries_added: string[] }[]).find(
      (r) => r.tool === 'get_weather' && r.queries_added.includes(WORDING),
    );
    expect(lines).toBeDefined();
    const applied = await api('POST', `/v1/agents/${agent}/revisions/${lines?.revision_id}/apply`, {
      body: { approved_by: 'op' },
    });
    expect(applied.status).toBe(200);
    const row = await getTool(agent, 'get_weather');
    expect(row.body.examples.map((e: { text: string }) => e.text)).toContain(WORDING);
    expect(row.body.memory).toBeUndefined();
    expect(await rankOf(agent, WORDING, 'get_weather')).toBe(1);

    // Undoing the example brings memory's copy back.
    const undone = await api('POST', `/v1/agents/${agent}/tools/get_weather/undo`, { body: { approved_by: 'op' } });
    expect(undone.status).toBe(200);
    expect((await getTool(agent, 'get_weather')).body.memory).toEqual([WORDING]);
  });

  it('is undone like any revision: the wording leaves memory and routing forgets it', async () => {
    const agent = await setup();
    const before = await rankOf(agent, WORDING, 'get_weather');
    await servedIn(agent, ['c1', 'c2'], WORDING, 'get_weather', { city: 'Oslo' });
    const rev = (await review(agent)).body.memory[0];

    const undone = await api('POST', `/v1/agents/${agent}/tools/get_weather/undo`, { body: { approved_by: 'op' } });
    expect(undone.status).toBe(200);
    expect(undone.body).toMatchObject({
      revision_id: rev.revision_id,
      kind: 'memory',
      status: 'undone',
      undone_by: 'op',
    });
    expect((await getTool(agent, 'get_weather')).body.memory).toBeUndefined();
    expect(await rankOf(agent, WORDING, 'get_weather')).toBe(before);
  });

  it('waits for a person when memory_auto_apply is false, and applies on approval', async () => {
    const agent = await setup({ memory_auto_apply: false });
    await servedIn(agent, ['c1', 'c2'], WORDING, 'get_weather', { city: 'Oslo' });

    const res = await review(agent);
    expect(res.status).toBe(200);
    const rev = res.body.memory[0];
    expect(rev).toMatchObject({ kind: 'memory', status: 'proposed', approved_by: null, memory: { added: [WORDING] } });
    expect((await getTool(agent, 'get_weather')).body.memory).toBeUndefined();

    const edited = await api('POST', `/v1/agents/${agent}/revisions/${rev.revision_id}/apply`, {
      body: { approved_by: 'dana', edit: { notes_added: ['x'] } },
    });
    expect(edited.status).toBe(400);
    expect(edited.body.error.message).toBe('a memory revision has no lines to edit; apply or dismiss it');
    expect((await getTool(agent, 'get_weather')).body.memory).toBeUndefined();

    const applied = await api('POST', `/v1/agents/${agent}/revisions/${rev.revision_id}/apply`, {
      body: { approved_by: 'dana' },
    });
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ status: 'applied', approved_by: 'dana', memory: { added: [WORDING] } });
    expect((await getTool(agent, 'get_weather')).body.memory).toEqual([WORDING]);
  });

  it('withdraws a wording that would push a served tool out of top_k for a request it served', async () => {
    const agent = await setup({ top_k: 1, memory_bytes: 0 });
    const stolen = 'reserve a room for the long weekend';
    expect(await rankOf(agent, stolen, 'book_hotel')).toBe(1);
    await served(agent, 'c1', stolen, 'book_hotel', { city: 'Oslo' });
    expect((await review(agent)).body.memory).toBeUndefined();

    expect((await api('PUT', `/v1/agents/${agent}/config`, { body: { memory_bytes: 1024 } })).status).toBe(200);
    const greedy = 'reserve a room for the long weekend and tell me the weather';
    const kept = 'will it be windy on the coast tomorrow';
    await servedIn(agent, ['c2', 'c4'], greedy, 'get_weather', { city: 'Oslo' });
    await servedIn(agent, ['c3', 'c5'], kept, 'get_weather', { city: 'Oslo' });
    const res = await review(agent);
    expect(res.status).toBe(200);
    const rev = (res.body.memory as { tool: string }[]).find((r) => r.tool === 'get_weather');
    expect(rev).toMatchObject({
      status: 'applied',
      memory: { added: [kept], withdrawn: [greedy] },
      displaced: [{ request: stolen, tool: 'book_hotel' }],
    });
    expect((await getTool(agent, 'get_weather')).body.memory).toEqual([kept]);
    expect(await rankOf(agent, stolen, 'book_hotel')).toBe(1);
  });

  it('remembers nothing when memory_bytes is 0', async () => {
    const agent = await setup({ memory_bytes: 0 });
    await served(agent, 'c1', WORDING, 'get_weather', { city: 'Oslo' });
    const res = await review(agent);
    expect(res.status).toBe(200);
    expect(res.body.memory).toBeUndefined();
    expect((await getTool(agent, 'get_weather')).body.memory).toBeUndefined();
  });

  it('refuses a memory budget out of range and writes nothing', async () => {
    const agent = await setup();
    const res = await api('PUT', `/v1/agents/${agent}/config`, { body: { memory_bytes: 16_385 } });
    expect(res.status).toBe(400);
    expect((await api('GET', `/v1/agents/${agent}/config`)).body).toMatchObject({
      memory_bytes: 16_384,
      memory_auto_apply: true,
    });
  });

  it('keeps a tool’s memory within memory_bytes: the wordings that bring the most words stay', async () => {
    const short = 'will it be windy on the coast tomorrow';
    const agent = await setup({ memory_bytes: new TextEncoder().encode(`${WORDING}${short}`).length });
    await servedIn(agent, ['c1', 'c2'], WORDING, 'get_weather', { city: 'Oslo' });
    await servedIn(agent, ['c3', 'c4'], short, 'get_weather', { city: 'Oslo' });
    await servedIn(agent, ['c5', 'c6'], 'an umbrella on the windy coast', 'get_weather', { city: 'Oslo' });
    const res = await review(agent);
    expect(res.status).toBe(200);
    // Three wordings were served, from two conversations each, and do not fit: the one whose words the others cover goes.
    const rev = res.body.memory[0];
    expect(new Set(rev.memory.runs.map((r: { wording: string }) => r.wording))).toEqual(
      new Set([WORDING, short, 'an umbrella on the windy coast']),
    );
    expect(rev.memory.added).toEqual([WORDING, short]);
    expect((await getTool(agent, 'get_weather')).body.memory?.sort()).toEqual([WORDING, short].sort());
  });

  it('never remembers a value from one conversation: a name, an argument value or a reference', async () => {
    const agent = await setup();
    await served(agent, 'c1', 'email Zorblatt Quennick the invoice for order 4471-XK today', 'send_email', {
      to: 'zq@example.com',
      body: 'invoice',
    });
    await served(agent, 'c2', 'check the weather in Trondheim before the trip', 'get_weather', { city: 'Trondheim' });

    const res = await review(agent);
    expect(res.status).toBe(200);
    const remembered = (res.body.memory as { memory: { added: string[] } }[]).flatMap((r) => r.memory.added);
    expect(remembered.length).toBeGreaterThan(0);
    for (const text of remembered) {
      expect(text).not.toMatch(/Zorblatt|Quennick|4471|Trondheim|<value>/);
    }
    const rows = await Promise.all(['send_email', 'get_weather'].map((n) => getTool(agent, n)));
    expect(JSON.stringify(rows.map((r) => r.body))).not.toMatch(/Zorblatt|Quennick|4471|Trondheim/);
  });
});
