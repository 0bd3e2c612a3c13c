/**
 * Learning under real traffic (docs/learning.md "Attribution"), through HTTP on real local D1 and
 * the agent's Durable Object with the offline extractive model: habit calls, re-asks in other words,
 * follow-ups, chains, retries, the application's verdict and requests that ask for two things. Each
 * case is the traffic an agent sends, then one review, and what each tool may learn from it.
 */
import { describe, expect, it } from 'vitest';
import { agentId, agentWithTools, api } from '../helpers/requests.ts';
import { CLAIM_TOOLS, tool } from '../helpers/tools.ts';
import { routedTurn, type TurnCall } from '../helpers/turns.ts';

const ORDER = { order_id: { type: 'string' } };
const TOOLS = [
  tool('lookup_order', 'Look up a shop order by its id: status, items, delivery date.', ORDER),
  tool('cancel_order', 'Cancel a shop order that has not shipped yet.', ORDER),
  tool('send_email', 'Send an email message to a recipient.', { to: { type: 'string' }, body: { type: 'string' } }),
  tool('book_flight', 'Book an airline flight for a passenger.', {
    to: { type: 'string' },
    date: { type: 'string' },
    passenger: { type: 'string' },
  }),
  tool('flight_checkin', 'Check a passenger in for a booked flight.', { passenger: { type: 'string' } }),
  tool('get_weather', 'Current weather and forecast for a city.', { city: { type: 'string' } }),
  tool('book_hotel', 'Book a hotel room in a city.', { city: { type: 'string' } }),
  CLAIM_TOOLS.lookup_claim,
  CLAIM_TOOLS.start_recovery,
  CLAIM_TOOLS.refer_llu,
  CLAIM_TOOLS.set_rvf,
];

interface Revision {
  tool: string;
  queries_added: string[];
  avoid_added: string[];
  notes_added: string[];
  evidence: { kind: string; how: string | null; served_by: string | null; text: string }[];
}

/** A fresh agent with the file's tools. */
const setup = () => agentWithTools(TOOLS, 'traffic');

/** One turn: `/route` (k tools) in a conversation, then the agent's calls for it with the turn id. */
async function turn(
  agent: string,
  conversation: string,
  request: string,
  k: number,
  calls: TurnCall[],
): Promise<string> {
  return (await routedTurn(agent, conversation, request, k, calls)).turn_id;
}

async function review(agent: string): Promise<Revision[]> {
  const res = await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true } });
  expect(res.status).toBe(200);
  return res.body.revisions;
}

const of = (revisions: Revision[], name: string) => revisions.find((r) => r.tool === name);

/** Two ways of asking start_recovery's job that routing ranks it first for. */
const RECOVER = [
  'recover our money on this claim from the other party',
  'recover the money the other party owes us on the claim',
];

/**
 * Each RECOVER wording in its own conversation (`prefix` + index): routing ranks start_recovery
 * above lookup_claim, the agent picks lookup_claim, which answers; then the request `next` makes
 * of the claim reference (`refBase` + index) is served by start_recovery.
 */
async function passedOver(agent: string, prefix: string, refBase: string, next: (ref: string) => string) {
  for (const [i, wording] of RECOVER.entries()) {
    const ref = `${refBase}${i}`;
    const { offered } = await routedTurn(agent, `${prefix}${i}`, wording, 5, [
      { tool: 'lookup_claim', arguments: { claim_ref: ref } },
    ]);
    expect(offered.indexOf('start_recovery')).toBeGreaterThanOrEqual(0);
    expect(offered.indexOf('start_recovery')).toBeLessThan(offered.indexOf('lookup_claim'));
    await turn(agent, `${prefix}${i}`, next(ref), 3, [{ tool: 'start_recovery', arguments: { claim_ref: ref } }]);
  }
}

/** Two ways of saying "claw back" that the agent answers with lookup_claim. */
const CLAW_BACK = ['claw back the overpayment on this one', 'claw back what we overpaid here'];

/**
 * Each CLAW_BACK wording in its own conversation (`prefix` + index), answered by lookup_claim; then
 * the request `next` of that conversation is served by start_recovery. Returns the wordings.
 */
async function clawBackThen(agent: string, prefix: string, next: string): Promise<string[]> {
  for (const [i, wording] of CLAW_BACK.entries()) {
    const ref = `CW-22222${i}`;
    await turn(agent, `${prefix}${i}`, wording, 2, [{ tool: 'lookup_claim', arguments: { claim_ref: ref } }]);
    await turn(agent, `${prefix}${i}`, next, 2, [{ tool: 'start_recovery', arguments: { claim_ref: ref } }]);
  }
  return CLAW_BACK;
}

const learned = (revisions: Revision[], name: string) => {
  const r = of(revisions, name);
  return r ? [...r.queries_added, ...r.avoid_added, ...r.notes_added] : [];
};

describe('learning under real traffic', () => {
  it('habit calls: a confirmation e-mail after every cancellation learns nothing from the cancel wordings; the cancel tool does', async () => {
    const agent = await setup();
    const orders = ['4471-XK', '5820-QT', '6613-LM'];
    for (const [i, order] of orders.entries()) {
      await turn(agent, `h${i}`, `drop purchase ${order} please`, 1, [
        { tool: 'lookup_order', arguments: { order_id: order } },
        { tool: 'cancel_order', arguments: { order_id: order } },
        { tool: 'send_email', arguments: { to: `buyer${i}@example.com`, body: `Order ${order} was cancelled` } },
      ]);
    }
    const revisions = await review(agent);
    expect(learned(revisions, 'send_email')).toEqual([]);
    expect(learned(revisions, 'lookup_order')).toEqual([]);
    expect(of(revisions, 'cancel_order')?.queries_added).toEqual(['drop purchase please']);
  });

  it('a first name typed, not passed, by several conversations is never learned; a house term used as often is', async () => {
    const agent = await setup();
    const names = ['Fintan', 'Marisol', 'Oriana'];
    let n = 0;
    for (const name of names) {
      for (const c of [0, 1, 2]) {
        const order = `${70 + n++}1-XK`;
        await turn(agent, `${name}-${c}`, `drop purchase ${order} for ${name} please`, 1, [
          { tool: 'lookup_order', arguments: { order_id: order } },
          { tool: 'cancel_order', arguments: { order_id: order } },
        ]);
      }
    }
    for (const c of [0, 1, 2, 3]) {
      const order = `${90 + c}2-QT`;
      await turn(agent, `titan-${c}`, `drop purchase ${order} through the Titan desk`, 1, [
        { tool: 'lookup_order', arguments: { order_id: order } },
        { tool: 'cancel_order', arguments: { order_id: order } },
      ]);
    }
    const revisions = await review(agent);
    const everything = JSON.stringify(revisions);
    for (const name of names) expect(everything).not.toContain(name);
    expect(of(revisions, 'cancel_order')?.queries_added).toEqual(
      expect.arrayContaining(['drop purchase for please', 'drop purchase through the Titan desk']),
    );
  });

  it('a request that names the habit tool is served by it: "email" after a lookup is what was asked', async () => {
    const agent = await setup();
    for (const i of [0, 1, 2]) {
      await turn(agent, `h${i}`, `scrap my order 40${i}1-XK please`, 1, [
        { tool: 'lookup_order', arguments: { order_id: `40${i}1-XK` } },
        { tool: 'cancel_order', arguments: { order_id: `40${i}1-XK` } },
        { tool: 'send_email', arguments: { to: `buyer${i}@example.com`, body: 'cancelled' } },
      ]);
    }
    for (const i of [0, 1]) {
      await turn(agent, `e${i}`, `email the delivery status of my parcel ${i}55-AB to me`, 1, [
        { tool: 'lookup_order', arguments: { order_id: `${i}55-AB` } },
        { tool: 'send_email', arguments: { to: `buyer${i}@example.com`, body: 'on its way' } },
      ]);
    }
    const revisions = await review(agent);
    expect(of(revisions, 'send_email')?.queries_added ?? []).not.toContain('scrap my order please');
    expect(learned(revisions, 'lookup_order')).toEqual([]);
  });

  it('a habit e-mail that is the only tool after a lookup is set aside: the lookup served, the e-mail learns nothing', async () => {
    const agent = await setup();
    for (const i of [0, 1, 2]) {
      await turn(agent, `h${i}`, `drop purchase 40${i}1-XK please`, 1, [
        { tool: 'lookup_order', arguments: { order_id: `40${i}1-XK` } },
        { tool: 'cancel_order', arguments: { order_id: `40${i}1-XK` } },
        { tool: 'send_email', arguments: { to: `buyer${i}@example.com`, body: 'cancelled' } },
      ]);
    }
    for (const i of [0, 1, 2]) {
      await turn(agent, `q${i}`, `where has my parcel ${i}55-AB got to`, 1, [
        { tool: 'lookup_order', arguments: { order_id: `${i}55-AB` } },
        { tool: 'send_email', arguments: { to: `buyer${i}@example.com`, body: 'on its way' } },
      ]);
    }
    const revisions = await review(agent);
    expect(learned(revisions, 'send_email')).toEqual([]);
    expect(of(revisions, 'send_email')?.evidence ?? []).toEqual([]);
  });

  it('a correction in other words re-asks: "no, I meant …" moves the wording to the tool that served it', async () => {
    const agent = await setup();
    const wordings = await clawBackThen(agent, 'k', 'No, I meant start recovery against the other insurer');
    const revisions = await review(agent);
    expect(of(revisions, 'start_recovery')?.queries_added).toEqual(expect.arrayContaining(wordings));
    expect(
      of(revisions, 'lookup_claim')
        ?.evidence.filter((e) => e.kind === 'confused_request')
        .map((e) => [e.how, e.served_by, e.text]),
    ).toEqual(wordings.map((w) => ['re_asked', 'start_recovery', w]));
    expect(of(revisions, 'lookup_claim')?.avoid_added).toEqual([expect.stringMatching(/; use start_recovery\.$/)]);
  });

  it('a re-ask that ends "can you help me with that?" is still a re-ask: the pointer is to its own first sentence', async () => {
    const agent = await setup();
    const wordings = await clawBackThen(
      agent,
      'h',
      'We overpaid on a claim and need to claw it back. Can you help me with that?',
    );
    const revisions = await review(agent);
    expect(of(revisions, 'start_recovery')?.queries_added).toEqual(expect.arrayContaining(wordings));
    expect(
      of(revisions, 'lookup_claim')
        ?.evidence.filter((e) => e.kind === 'confused_request' && e.how === 're_asked')
        .map((e) => [e.how, e.served_by, e.text]),
    ).toEqual(wordings.map((w) => ['re_asked', 'start_recovery', w]));
  });

  it('a request that opens with "now" takes the next step, even when it says "not": no Not-for line, no example moved', async () => {
    const agent = await setup();
    for (const [i, city] of ['Lisbon', 'Madrid', 'Oslo'].entries()) {
      await turn(agent, `n${i}`, `book a flight to ${city} for Friday`, 2, [
        { tool: 'book_flight', arguments: { to: city, date: 'Friday' } },
      ]);
      await turn(agent, `n${i}`, 'now book a room in the old town, not near the airport', 2, [
        { tool: 'book_hotel', arguments: { city } },
      ]);
    }
    const revisions = await review(agent);
    expect(of(revisions, 'book_flight')?.evidence.filter((e) => e.kind === 'confused_request') ?? []).toEqual([]);
    expect(learned(revisions, 'book_flight')).toEqual([]);
    expect(
      of(revisions, 'book_hotel')?.evidence.filter((e) => e.how === 'next_request' || e.how === 're_asked') ?? [],
    ).toEqual([]);
  });

  it('a doubtful run teaches nothing and is counted: a cancellation that failed, then an e-mail that went out', async () => {
    const agent = await setup();
    for (const i of [0, 1, 2]) {
      await turn(agent, `d${i}`, `scrap purchase 60${i}1-XK please`, 1, [
        { tool: 'cancel_order', arguments: { order_id: `60${i}1-XK` }, success: false, error: 'already shipped' },
        { tool: 'send_email', arguments: { to: `buyer${i}@example.com`, body: 'could not cancel' } },
      ]);
    }
    const res = await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true } });
    expect(res.status).toBe(200);
    expect(res.body.doubtful_runs).toBe(3);
    const revisions: Revision[] = res.body.revisions;
    expect(of(revisions, 'send_email')).toBeUndefined();
    expect(of(revisions, 'cancel_order')?.queries_added ?? []).toEqual([]);
    expect(of(revisions, 'cancel_order')?.avoid_added ?? []).toEqual([]);
  });

  it('a re-ask in other words is still a miss: "claw back" becomes an example of start_recovery', async () => {
    const agent = await setup();
    const wordings = ['claw back the overpayment please', 'claw back that overpayment from the other insurer'];
    for (const [i, wording] of wordings.entries()) {
      await turn(agent, `c${i}`, wording, 2, []);
      await turn(agent, `c${i}`, `start recovery on claim CW-11111${i}`, 2, [
        { tool: 'start_recovery', arguments: { claim_ref: `CW-11111${i}` } },
      ]);
    }
    const revisions = await review(agent);
    const recovery = of(revisions, 'start_recovery');
    expect(recovery?.queries_added).toEqual(expect.arrayContaining(wordings));
    expect(recovery?.evidence.filter((e) => e.how === 'next_request').map((e) => e.text)).toEqual(wordings);
  });

  it('a follow-up is not a re-ask: a check-in after a booking and a hotel after the weather teach no Not-for line', async () => {
    const agent = await setup();
    const people = [
      ['Ana Pereira', 'Lisbon', '3 May'],
      ['Rui Costa', 'Madrid', '9 June'],
      ['Eva Lind', 'Oslo', '12 July'],
    ];
    for (const [i, [name, city, date]] of people.entries()) {
      const first = name?.split(' ')[0];
      await turn(agent, `f${i}`, `book a flight to ${city} on ${date} for ${name}`, 2, [
        { tool: 'book_flight', arguments: { to: city, date, passenger: name } },
      ]);
      await turn(agent, `f${i}`, `now check ${first} in for that flight`, 2, [
        { tool: 'flight_checkin', arguments: { passenger: name } },
      ]);
      await turn(agent, `w${i}`, `what's the weather in ${city}`, 2, [{ tool: 'get_weather', arguments: { city } }]);
      await turn(agent, `w${i}`, `book a room in ${city}`, 2, [{ tool: 'book_hotel', arguments: { city } }]);
    }
    const revisions = await review(agent);
    for (const name of ['book_flight', 'get_weather', 'flight_checkin', 'book_hotel']) {
      expect(of(revisions, name)?.avoid_added ?? []).toEqual([]);
      expect(of(revisions, name)?.evidence.filter((e) => e.kind === 'confused_request') ?? []).toEqual([]);
    }
    expect(of(revisions, 'flight_checkin')?.queries_added ?? []).toEqual([]);
    expect(of(revisions, 'book_hotel')?.queries_added ?? []).toEqual([]);
  });

  it('a chain: wrong, re-ask, wrong, re-ask, right credits every earlier run to the tool that served the last', async () => {
    const agent = await setup();
    for (const i of [0, 1]) {
      const ref = `CW-7000${i}`;
      await turn(agent, `r${i}`, 'the reserve on this claim needs raising', 1, [
        { tool: 'refer_llu', arguments: { claim_ref: ref } },
      ]);
      await turn(agent, `r${i}`, 'raise the reserve figure on the claim', 1, [
        { tool: 'lookup_claim', arguments: { claim_ref: ref } },
      ]);
      await turn(agent, `r${i}`, 'no, set the reserve figure to 20000 on the claim', 1, [
        { tool: 'set_rvf', arguments: { claim_ref: ref, amount: 20000 } },
      ]);
    }
    const revisions = await review(agent);
    const served = (name: string) =>
      of(revisions, name)
        ?.evidence.filter((e) => e.kind === 'confused_request')
        .map((e) => e.served_by) ?? [];
    expect(served('refer_llu')).toEqual(['set_rvf', 'set_rvf']);
    expect(served('lookup_claim')).toEqual(['set_rvf', 'set_rvf']);
    expect(of(revisions, 'refer_llu')?.avoid_added).toEqual([expect.stringMatching(/; use set_rvf\.$/)]);
    expect(of(revisions, 'set_rvf')?.queries_added).toEqual(
      expect.arrayContaining(['the reserve on this claim needs raising']),
    );
  });

  it('a passed-over tool that then served: a wrong pick below the right one, a re-ask in other words, the wording goes to the right tool', async () => {
    const agent = await setup();
    // The user asks again in words the first request does not share.
    await passedOver(agent, 'p', 'CW-33333', (ref) => `start subrogation on ${ref}`);
    const revisions = await review(agent);
    const recovery = of(revisions, 'start_recovery');
    expect(recovery?.evidence.filter((e) => e.how === 'next_request').map((e) => e.text)).toEqual(RECOVER);
    expect(recovery?.queries_added).toContain(RECOVER[0]);
    expect(of(revisions, 'lookup_claim')?.queries_added ?? []).toEqual([]);
    expect(
      of(revisions, 'lookup_claim')
        ?.evidence.filter((e) => e.kind === 'confused_request')
        .map((e) => [e.how, e.served_by, e.text]),
    ).toEqual(RECOVER.map((w) => ['re_asked', 'start_recovery', w]));
  });

  it('a pick below the tool routing ranked first, whose next request that tool served, teaches the pick nothing, even when the next reads as a new step', async () => {
    const agent = await setup();
    // "Now …" reads as the next step, so no re-ask moves the wording.
    await passedOver(agent, 'n', 'CW-44444', (ref) => `now start subrogation on ${ref}`);
    const revisions = await review(agent);
    expect(learned(revisions, 'lookup_claim')).toEqual([]);
    expect(of(revisions, 'lookup_claim')?.evidence.filter((e) => e.how === 'ranked_low') ?? []).toEqual([]);
  });

  it('the log decides who serves a wording: a tool the agent picked for it in fewer conversations than another learns nothing from it', async () => {
    const agent = await setup();
    const loss = (ref: string) => `refer the large loss on claim ${ref} to the specialist unit`;
    for (const ref of ['CW-100001', 'CW-100002', 'CW-100003'])
      await turn(agent, `llu-${ref}`, loss(ref), 1, [{ tool: 'refer_llu', arguments: { claim_ref: ref } }]);
    for (const ref of ['CW-100004', 'CW-100005']) {
      const { offered } = await routedTurn(agent, `sr-${ref}`, loss(ref), 1, [
        { tool: 'start_recovery', arguments: { claim_ref: ref } },
      ]);
      expect(offered).not.toContain('start_recovery');
    }
    const res = await api('POST', `/v1/agents/${agent}/reviews`, { body: { dry_run: true } });
    expect(res.status).toBe(200);
    expect(learned(res.body.revisions, 'start_recovery')).toEqual([]);
    const refusals = [...res.body.refused, ...res.body.revisions.flatMap((r: { refused: unknown[] }) => r.refused)];
    expect(refusals).toContainEqual(
      expect.objectContaining({
        tool: 'start_recovery',
        kind: 'request',
        reason: 'contradicts',
        detail: 'requests saying this were finally served by refer_llu in 3 conversations and by start_recovery in 2',
      }),
    );
  });

  it('retries are one run: a failure retried twice in one turn, or in one conversation, teaches no usage note', async () => {
    const agent = await setup();
    const error = 'claim_ref must start with CW-';
    const failures = [1, 2, 3].map((n) => ({
      tool: 'lookup_claim',
      arguments: { claim_ref: `90000${n}` },
      success: false,
      error,
    }));
    await turn(agent, 'one', 'show claim 900001', 3, [
      ...failures,
      { tool: 'lookup_claim', arguments: { claim_ref: 'CW-900001' } },
    ]);
    await turn(agent, 'one', 'show claim 900002', 3, [
      failures[1] as TurnCall,
      { tool: 'lookup_claim', arguments: { claim_ref: 'CW-900002' } },
    ]);
    const revisions = await review(agent);
    expect(of(revisions, 'lookup_claim')?.notes_added ?? []).toEqual([]);
    // The same failure in a second conversation is a repeated error: now a note is due.
    await turn(agent, 'two', 'show claim 900004', 3, [
      { tool: 'lookup_claim', arguments: { claim_ref: '900004' }, success: false, error },
      { tool: 'lookup_claim', arguments: { claim_ref: 'CW-900004' } },
    ]);
    expect(of(await review(agent), 'lookup_claim')?.notes_added).toHaveLength(1);
  });

  it('a failure the same call got past when retried with the same arguments is transient and teaches no note', async () => {
    const agent = await setup();
    const error = 'Could not reach the claims service: carrier timeout';
    for (const n of [1, 2, 3]) {
      const args = { claim_ref: `CW-70000${n}` };
      await turn(agent, `t${n}`, `show claim CW-70000${n}`, 3, [
        { tool: 'lookup_claim', arguments: args, success: false, error },
        { tool: 'lookup_claim', arguments: { ...args } },
      ]);
    }
    const revisions = await review(agent);
    expect(of(revisions, 'lookup_claim')?.notes_added ?? []).toEqual([]);
    expect(of(revisions, 'lookup_claim')?.evidence.filter((e) => e.kind === 'failed_call') ?? []).toEqual([]);
  });

  it("the agent's verdict: ok false with no served_by means nothing served, so the run's tool learns no example", async () => {
    const agent = await setup();
    for (const [i, wording] of [
      'what is the reserve figure on this loss',
      'reserve figure held on the loss',
    ].entries()) {
      const turnId = await turn(agent, `v${i}`, wording, 1, [
        { tool: 'lookup_claim', arguments: { claim_ref: `CW-6000${i}` } },
      ]);
      const res = await api('POST', `/v1/agents/${agent}/outcomes`, { body: { turn_id: turnId, ok: false } });
      expect(res.status).toBe(204);
    }
    const revisions = await review(agent);
    expect(of(revisions, 'lookup_claim')?.queries_added ?? []).toEqual([]);
    expect(of(revisions, 'lookup_claim')?.evidence.filter((e) => e.kind === 'missed_request') ?? []).toEqual([]);
  });

  it('a request for two things: both tools served it together, no Not-for line between them, no example for one alone', async () => {
    const agent = await setup();
    const wordings = [
      'book a flight to Rome and a room near the Colosseum',
      'book a flight to Rome and a room by the Pantheon',
    ];
    for (const [i, wording] of wordings.entries()) {
      await turn(agent, `m${i}`, wording, 1, [
        { tool: 'book_flight', arguments: { to: 'Rome', date: `2027-05-0${i}`, passenger: 'P' } },
        { tool: 'book_hotel', arguments: { city: 'Rome' } },
      ]);
    }
    const revisions = await review(agent);
    for (const name of ['book_flight', 'book_hotel']) {
      expect(of(revisions, name)?.queries_added ?? []).toEqual([]);
      expect(of(revisions, name)?.avoid_added ?? []).toEqual([]);
    }
  });
});

describe('the privacy rule', () => {
  const PEOPLE = [
    {
      name: 'Ana Pereira',
      email: 'ana.pereira@example.com',
      phone: '+351 912 345 678',
      card: '4111 1111 1111 1111',
      iban: 'PT50 0002 0123 1234 5678 9015 4',
      address: '12 Rua Augusta',
      amount: 1250,
      written: '$1,250.00',
      order: '4471-XK',
    },
    {
      name: 'Rui Costa',
      email: 'rui.costa@example.org',
      phone: '(415) 555-0134',
      card: '5500-0000-0000-0004',
      iban: 'DE89 3704 0044 0532 0130 00',
      address: '221B Baker Street',
      amount: 87.5,
      written: '€87.50',
      order: '5820-QT',
    },
    {
      name: 'Eva Lindqvist',
      email: 'eva@lindqvist.se',
      phone: '+46 70 123 45 67',
      card: '3782 822463 10005',
      iban: 'SE45 5000 0000 0583 9825 7466',
      address: '7 Calle Mayor',
      amount: 19.99,
      written: '19.99 USD',
      order: '6613-LM',
    },
  ];
  const PAY = tool('pay_invoice', 'Pay an invoice with a card.', {
    invoice: { type: 'string' },
    amount: { type: 'number' },
    card: { type: 'string' },
  });

  it('nothing learned holds a personal value: notes, examples, Not-for lines, the example call, evidence and refusals', async () => {
    const agent = agentId('privacy');
    expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools: [...TOOLS, PAY] } })).status).toBe(200);
    for (const [i, p] of PEOPLE.entries()) {
      const request = `settle the bill of ${p.written} for ${p.name} at ${p.address}, order ${p.order}`;
      await turn(agent, `p${i}`, request, 1, [
        {
          tool: 'pay_invoice',
          arguments: { invoice: p.order, amount: p.amount, card: p.card.replace(/\D/g, '') },
          success: false,
          // The caller's fault (a format), so a note is learned from it: its values must not be.
          error: `Card ${p.card} is not in the expected format for ${p.name} <${p.email}>, call ${p.phone}`,
        },
        { tool: 'pay_invoice', arguments: { invoice: p.order, amount: p.amount, card: 'on file' }, request },
      ]);
      await turn(agent, `p${i}`, `wire it from ${p.iban} instead`, 1, [
        { tool: 'send_email', arguments: { to: p.email, body: `Payment for ${p.order}` } },
      ]);
    }
    const res = await api('POST', `/v1/agents/${agent}/reviews`, { body: { auto_apply: true } });
    expect(res.status).toBe(200);
    const pay = (res.body.revisions as Revision[]).find((r) => r.tool === 'pay_invoice');
    expect(pay?.notes_added).toEqual([
      expect.stringMatching(/^Calls fail with "Card <value> is not in the expected format for <value>/),
    ]);
    expect(pay?.queries_added).toContain('settle the bill of for at , order');
    const row = await api('GET', `/v1/agents/${agent}/tools/pay_invoice`);
    const everything = JSON.stringify([res.body, row.body]);
    const flat = (t: string) => ` ${t.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ')} `;
    for (const p of PEOPLE) {
      for (const value of [
        p.name,
        p.email,
        p.phone,
        p.card,
        p.iban,
        p.address,
        p.written,
        p.order,
        ...p.name.split(' '),
      ]) {
        expect(everything).not.toContain(value);
        expect(flat(everything)).not.toContain(flat(value));
        const compact = flat(value).replace(/ /g, '');
        if (compact.length >= 6) expect(flat(everything).replace(/ /g, '')).not.toContain(compact);
      }
    }
  });
});
