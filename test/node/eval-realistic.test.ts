/** The realistic agent of the eval (scripts/eval-realistic-*.ts): its labels and its leak finder, in process. */
import { describe, expect, it } from 'vitest';
import type { EvalQuery } from '../../scripts/eval-data.ts';
import { type Labels, RealisticAgent, withSuffix } from '../../scripts/eval-realistic-agent.ts';
import { type PersonalValue, ValueBook } from '../../scripts/eval-realistic-data.ts';
import { findLeaks, learnedTexts } from '../../scripts/eval-realistic-measure.ts';

const value = (id: number, kind: PersonalValue['kind'], text: string, arg: string | number, forms: string[] = []) => ({
  id,
  kind,
  text,
  arg,
  forms,
});

describe('the leak finder', () => {
  const values = [
    value(0, 'card', '4111 1111 1111 1111', '4111111111111111'),
    value(1, 'name', 'Ana Pereira', 'Ana Pereira', ['Ana', 'Pereira']),
    value(2, 'amount', '$1,250.00', 1250, ['1250']),
  ];

  it('finds a value in another form than the one typed, and says where', () => {
    const leaks = findLeaks(values, [{ where: 'tool t: notes[0]', text: 'Calls fail with "card 4111111111111111"' }]);
    expect(leaks).toEqual([
      expect.objectContaining({ kind: 'card', form: '4111111111111111', match: 'exact', where: 'tool t: notes[0]' }),
    ]);
    const spaced = findLeaks(values, [{ where: 'x', text: 'card 4111-1111-1111-1111 declined' }]);
    expect(spaced).toEqual([expect.objectContaining({ form: '4111 1111 1111 1111', match: 'normalised' })]);
  });

  it('counts a short form only as a whole word', () => {
    expect(findLeaks(values, [{ where: 'x', text: 'banana analysis' }])).toEqual([]);
    expect(findLeaks(values, [{ where: 'x', text: 'check Ana in' }]).map((l) => l.form)).toEqual(['Ana']);
    expect(findLeaks(values, [{ where: 'x', text: 'refund 1,250 dollars' }]).map((l) => l.form)).toEqual(['1250']);
  });

  it('matches a long form across spaces only where it starts and ends on a boundary of the text', () => {
    const brandt = [value(3, 'name', 'Brandt', 'Brandt'), value(4, 'order', '4471-XK', '4471-XK')];
    expect(findLeaks(brandt, [{ where: 'x', text: 'the brand that sells it' }])).toEqual([]);
    expect(findLeaks(brandt, [{ where: 'x', text: 'order 4471 XK' }]).map((l) => l.value)).toEqual(['4471-XK']);
    expect(findLeaks(brandt, [{ where: 'x', text: 'order 14471XK' }]).map((l) => l.value)).toEqual([]);
    expect(findLeaks(brandt, [{ where: 'x', text: 'ask Mr Brandt' }]).map((l) => l.value)).toEqual(['Brandt']);
  });

  it('reads routing memory as well as what the model reads: it feeds routing', () => {
    const row = { name: 'flight_checkin', description: null, examples: [], notes: [], avoid: [], call_example: null };
    const learned = {
      rows: [{ ...row, memory: ['check in for my flight', 'now check Ana in'] }],
      revisions: [],
      refused: [],
    };
    expect(findLeaks(values, learnedTexts(learned))).toEqual([
      expect.objectContaining({ form: 'Ana', where: 'tool flight_checkin: memory[1]' }),
    ]);
  });
});

describe('the realistic agent', () => {
  const wordings = (tool: string, texts: string[]): EvalQuery[] => texts.map((text, index) => ({ text, tool, index }));
  const streams = [
    wordings('book_flight', ['Book a flight to the coast', 'Reserve a plane seat', 'I need airline tickets']),
    wordings('flight_checkin', ['Check in for my flight', 'Get my boarding pass', 'Online check-in please']),
    wordings('weather', ['What is the weather like', 'Will it rain tomorrow', 'Forecast for the weekend']),
    wordings('send_email', ['Email me the receipt']),
  ];
  const run = async (seed: number): Promise<Labels> => {
    const agent = new RealisticAgent(seed, streams, new ValueBook(seed, ['flight weather'], 20));
    let turn = 0;
    // Routing that never offers the right tool first: wrong tools, misses and re-asks happen.
    const route = async () => ({ turn_id: `t${turn++}`, offered: ['weather', 'book_flight', 'flight_checkin'] });
    for (let round = 1; round <= 3; round++) {
      const plan = agent.plan(round);
      for (const [i, c] of plan.entries()) await agent.converse(round, i, c, route);
    }
    return agent.labels;
  };

  it('is the same traffic for the same seed, another for another seed', async () => {
    const a = await run(1);
    expect(JSON.stringify(await run(1))).toBe(JSON.stringify(a));
    expect(JSON.stringify(await run(2))).not.toBe(JSON.stringify(a));
  });

  it('labels every run and every pair of consecutive runs', async () => {
    const labels = await run(3);
    const byRun = new Map(labels.runs.map((r) => [r.run, r]));
    for (const p of labels.pairs) {
      const first = byRun.get(p.first);
      const next = byRun.get(p.next);
      expect(first?.conversation).toBe(next?.conversation);
      expect(p.label).toBe(['reask', 'correction', 'reask_disjoint'].includes(p.kind) ? 'reask' : 'follow_up');
      // A re-ask is the same request: every run of a chain belongs to the same tools.
      if (p.label === 'reask') expect(first?.served_by).toEqual(next?.served_by);
    }
    for (const r of labels.runs.filter((x) => x.kind === 'multi')) expect(r.served_by).toHaveLength(2);
    // A run that called a tool which served it: its last change call is one of the serving tools.
    for (const r of labels.runs.filter((x) => x.served_by.length === 1 && x.calls.some((c) => c.success))) {
      const changes = r.calls.filter((c) => c.success && !['send_email', 'send_notification'].includes(c.tool));
      if (changes.some((c) => c.tool === r.served_by[0])) expect(r.outcome).toBeNull();
    }
  });

  it('puts the suffix before the final punctuation', () => {
    expect(withSuffix('Can you book it?', ' for Ana')).toBe('Can you book it for Ana?');
    expect(withSuffix('Book it', ' for Ana')).toBe('Book it for Ana');
  });
});
