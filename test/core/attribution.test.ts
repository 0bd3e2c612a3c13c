import { describe, expect, it } from 'vitest';
import { type Attribution, attributeRuns, countDoubtful } from '../../src/core/attribution.ts';
import type { CallRecord, OutcomeRecord, TurnRecord } from '../../src/core/records.ts';
import { groupRuns } from '../../src/core/serving.ts';
import { callRecord, turnRecord } from '../helpers/calls.ts';

let seq = 0;
const stamp = (n: number): string => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();

/** A log built turn by turn: each turn is routed, then its calls are logged in order. */
class Log {
  turns: TurnRecord[] = [];
  calls: CallRecord[] = [];
  outcomes: OutcomeRecord[] = [];

  turn(id: string, conversation: string, request: string, calls: [string, boolean][], offered: string[] = []): this {
    seq++;
    this.turns.push(turnRecord(seq, id, request, offered, { conversation_id: conversation, created_at: stamp(seq) }));
    calls.forEach(([tool, success], i) => {
      seq++;
      this.calls.push(
        callRecord(seq, tool, {
          call_id: `${id}-${i}`,
          success,
          error: success ? null : 'it did not go through',
          turn_id: id,
          conversation_id: conversation,
          at: stamp(seq),
        }),
      );
    });
    return this;
  }

  attribute(): Map<string, Attribution> {
    return attributeRuns(groupRuns(this.turns, this.calls), this.outcomes, { minConversations: 2 });
  }
}

/** Three conversations in which `send_email` follows a lookup and a change whatever was asked: a habit. */
function withEmailHabit(): Log {
  const log = new Log();
  for (const c of ['h1', 'h2', 'h3'])
    log.turn(`${c}-t`, c, 'cancel my order please', [
      ['lookup_order', true],
      ['cancel_order', true],
      ['send_email', true],
    ]);
  return log;
}

describe('attribution: habit follow-ups are set aside', () => {
  it('a habit e-mail after a change does not serve the request', () => {
    const a = withEmailHabit().attribute().get('turn:h1-t');
    expect(a?.served_by).toBe('cancel_order');
    expect(a?.doubt).toBeNull();
  });

  it('a habit e-mail that is the only success after a lookup is set aside: the lookup served', () => {
    const log = withEmailHabit().turn('q-t', 'q', 'where is my parcel', [
      ['lookup_order', true],
      ['send_email', true],
    ]);
    const a = log.attribute().get('turn:q-t');
    expect(a?.served_by).toBe('lookup_order');
    expect(a?.via).toBe('own');
  });

  it('a request that names the habit tool is served by it', () => {
    const log = withEmailHabit().turn('q-t', 'q', 'email me the status of my parcel', [
      ['lookup_order', true],
      ['send_email', true],
    ]);
    expect(log.attribute().get('turn:q-t')?.served_by).toBe('send_email');
  });
});

/** Runs in which the booking tools each serve alone: neither is a lookup that prepares the other. */
function withBookings(): Log {
  const log = new Log();
  for (const c of ['s1', 's2'])
    log
      .turn(`${c}-f`, c, 'book a flight to Oslo', [['book_flight', true]])
      .turn(`${c}-h`, c, 'now book a hotel there', [['book_hotel', true]]);
  return log;
}

describe('attribution: doubtful runs', () => {
  it('a tool that failed before another succeeded leaves the run doubtful: nothing served it', () => {
    const log = withEmailHabit().turn('d-t', 'd', 'cancel my order please', [
      ['cancel_order', false],
      ['send_email', true],
    ]);
    const a = log.attribute().get('turn:d-t');
    expect(a).toMatchObject({ served_by: null, via: null, own: null, doubt: 'failed_before_other' });
    expect(countDoubtful(log.attribute().values())).toEqual({ several_changed: 0, failed_before_other: 1 });
  });

  it('a failure retried into a success is no doubt', () => {
    const log = withEmailHabit().turn('r-t', 'r', 'cancel my order please', [
      ['cancel_order', false],
      ['cancel_order', true],
      ['send_email', true],
    ]);
    expect(log.attribute().get('turn:r-t')).toMatchObject({ served_by: 'cancel_order', doubt: null });
  });

  it('several tools that changed something for a request asking one thing leave it doubtful', () => {
    const log = withBookings().turn('m-t', 'm', 'sort out my booking', [
      ['book_flight', true],
      ['book_hotel', true],
    ]);
    expect(log.attribute().get('turn:m-t')).toMatchObject({ served_by: null, doubt: 'several_changed' });
  });

  it('a request joining several asks is served together, not doubtful', () => {
    const log = withBookings().turn('j-t', 'j', 'book a flight to Rome and a hotel near the Colosseum', [
      ['book_flight', true],
      ['book_hotel', true],
    ]);
    expect(log.attribute().get('turn:j-t')).toMatchObject({
      served_by: 'book_hotel',
      together: ['book_flight', 'book_hotel'],
      doubt: null,
    });
  });

  it('the next request of a doubtful run credits it only when it re-asks', () => {
    const log = withBookings()
      .turn('a1', 'a', 'sort out my booking', [
        ['book_flight', true],
        ['book_hotel', true],
      ])
      .turn('a2', 'a', 'now show the weather there', [['get_weather', true]])
      .turn('b1', 'b', 'sort out my booking', [
        ['book_flight', true],
        ['book_hotel', true],
      ])
      .turn('b2', 'b', 'no, I meant change the seat on my booking', [['change_seat', true]]);
    const all = log.attribute();
    expect(all.get('turn:a1')).toMatchObject({ served_by: null, doubt: 'several_changed' });
    expect(all.get('turn:b1')).toMatchObject({ served_by: 'change_seat', via: 'next_request', re_asked: true });
    expect(all.get('turn:b1')?.doubt).toBeNull();
  });

  it('an outcome naming the tool resolves the doubt', () => {
    const log = withBookings().turn('o-t', 'o', 'sort out my booking', [
      ['book_flight', true],
      ['book_hotel', true],
    ]);
    log.outcomes.push({ turn_id: 'o-t', ok: true, served_by: 'book_flight', at: stamp(999) });
    expect(log.attribute().get('turn:o-t')).toMatchObject({ served_by: 'book_flight', via: 'verified', doubt: null });
  });
});

describe('attribution: corrections and next steps', () => {
  it('a correction in other words re-asks: the first run belongs to the tool that served it', () => {
    const log = new Log()
      .turn('c1', 'c', 'claw back the overpayment please', [['lookup_claim', true]])
      .turn('c2', 'c', 'No, I meant start recovery on the claim', [['start_recovery', true]]);
    expect(log.attribute().get('turn:c1')).toMatchObject({
      served_by: 'start_recovery',
      via: 'next_request',
      re_asked: true,
      own: 'lookup_claim',
    });
  });

  it('a request that opens with the next step after a served run is a follow-up', () => {
    const log = new Log()
      .turn('f1', 'f', 'book a flight to Lisbon', [['book_flight', true]])
      .turn('f2', 'f', 'now book a hotel in Lisbon, not a flight', [['book_hotel', true]]);
    expect(log.attribute().get('turn:f1')).toMatchObject({ served_by: 'book_flight', via: 'own' });
  });
});

describe('attribution: a passed-over tool that then served', () => {
  // The agent answered "claw back the overpayment" with lookup_claim although routing ranked
  // start_recovery above it; the user asks again in words the first request does not share.
  const offered = ['start_recovery', 'lookup_claim', 'send_email'];

  it('the first run belongs to the better-ranked tool that served the next request', () => {
    const log = new Log()
      .turn('p1', 'p', 'claw back the overpayment please', [['lookup_claim', true]], offered)
      .turn('p2', 'p', 'start recovery on claim CW-111111', [['start_recovery', true]], offered);
    expect(log.attribute().get('turn:p1')).toMatchObject({
      served_by: 'start_recovery',
      via: 'next_request',
      re_asked: true,
      own: 'lookup_claim',
    });
  });

  it('a next request that reads as a follow-up task is no re-ask, whatever routing ranked', () => {
    const log = new Log()
      .turn('p1', 'p', 'claw back the overpayment please', [['lookup_claim', true]], offered)
      .turn('p2', 'p', 'now start recovery on that claim', [['start_recovery', true]], offered);
    expect(log.attribute().get('turn:p1')).toMatchObject({ served_by: 'lookup_claim', via: 'own', re_asked: false });
  });

  it('a tool ranked below the one the agent called did not serve the first request', () => {
    const log = new Log()
      .turn('p1', 'p', 'claw back the overpayment please', [['lookup_claim', true]], ['lookup_claim', 'start_recovery'])
      .turn('p2', 'p', 'start recovery on claim CW-111111', [['start_recovery', true]], offered);
    expect(log.attribute().get('turn:p1')).toMatchObject({ served_by: 'lookup_claim', via: 'own', re_asked: false });
  });
});

describe('a run the conversation went on from, to another tool, in unrelated words', () => {
  it('is unsettled: served by its own tool, but the log cannot tell a new task from a user who gave up on it', () => {
    const log = new Log()
      .turn('u1', 'cu', 'should I pack an umbrella', [['get_weather', true]])
      .turn('u2', 'cu', 'reserve me a bed for two nights', [['book_hotel', true]])
      .turn('f1', 'cf', 'should I pack an umbrella', [['get_weather', true]])
      .turn('f2', 'cf', 'now book a hotel there too', [['book_hotel', true]])
      .turn('s1', 'cs', 'should I pack an umbrella', [['get_weather', true]])
      .turn('s2', 'cs', 'and a warm coat, should I pack one', [['get_weather', true]])
      .turn('e1', 'ce', 'should I pack an umbrella', [['get_weather', true]]);
    const a = log.attribute();
    expect(a.get('turn:u1')).toMatchObject({ served_by: 'get_weather', via: 'own', unsettled: true });
    // A follow-up, the same tool again, or the end of the conversation settle it.
    for (const key of ['turn:f1', 'turn:s1', 'turn:e1'])
      expect(a.get(key)).toMatchObject({ served_by: 'get_weather', unsettled: false });
    expect(a.get('turn:u2')).toMatchObject({ served_by: 'book_hotel', unsettled: false });
  });
});
