import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildPrivacyIndex,
  findPersonal,
  INDEX_MAX_CHARS,
  MASK_MAX_CHARS,
  maskPersonal,
  type PrivacyIndex,
  type PrivacyScope,
  toolVocabulary,
} from '../../src/core/privacy.ts';

const CHECKIN = toolVocabulary({
  name: 'flight_checkin',
  description: 'Checks a passenger in for a booked flight and exports the boarding pass as BibTeX or to Spotify.',
  parameters: {
    type: 'object',
    properties: {
      booking_ref: { type: 'string', description: 'The booking reference' },
      seat: { type: 'string', enum: ['window', 'aisle'] },
    },
  },
});

/** An index where each text is its own conversation unless one is given. */
function indexOf(...texts: (string | [string, string])[]): PrivacyIndex {
  return buildPrivacyIndex(
    texts.map((t, i) =>
      typeof t === 'string' ? { text: t, conversation: `c${i}` } : { text: t[0], conversation: t[1] },
    ),
  );
}

function scopeOf(index: PrivacyIndex, values: readonly unknown[] = [], vocabulary = CHECKIN): PrivacyScope {
  return { index, minConversations: 2, vocabulary, values };
}

const EMPTY = scopeOf(indexOf());

describe('toolVocabulary', () => {
  it('holds the split name, the description, parameter names and enum values, lower-cased, with stems', () => {
    for (const word of ['flight', 'checkin', 'passenger', 'bibtex', 'spotify', 'booking', 'ref', 'seat', 'aisle']) {
      expect(CHECKIN.has(word), word).toBe(true);
    }
    expect(CHECKIN.has('check')).toBe(true);
  });
});

describe('maskPersonal: values by their look', () => {
  it('masks every kind in a request', () => {
    const text =
      'Refund $1,250.00 to card 4111 1111 1111 1111, mail ana@example.com or call +351 (21) 123-4567 by 3 May; ship to 12 Rua Augusta.';
    expect(maskPersonal(text, EMPTY)).toBe(
      'Refund <value> to card <value>, mail <value> or call <value> by <value>; ship to <value>.',
    );
  });

  it('masks values in an error the same way', () => {
    expect(maskPersonal('Error 404: order 4471-XK not found for https://shop.example.com/o/4471', EMPTY)).toBe(
      'Error <value>: order <value> not found for <value>',
    );
    expect(maskPersonal('Account PT50 0002 0123 1234 5678 9015 4 is invalid', EMPTY)).toBe(
      'Account <value> is invalid',
    );
  });

  it('never doubles the placeholder: values side by side become one', () => {
    const masked = maskPersonal('send to Ana Pereira ana@example.com +351 21 123 4567, 221B Baker Street', EMPTY);
    expect(masked).toBe('send to <value>');
    expect(maskPersonal('between 3 May and May 5th', EMPTY)).toBe('between <value> and <value>');
  });

  it('leaves an ordinary request untouched, character for character', () => {
    const text = 'Claw back the overpayment, please!  I was charged twice.';
    expect(maskPersonal(text, EMPTY)).toBe(text);
    expect(findPersonal(text, EMPTY)).toBeNull();
  });
});

describe('maskPersonal: argument values', () => {
  it('masks an argument value in another form than the call had it', () => {
    const scope = scopeOf(indexOf(), [1250]);
    for (const written of ['$1,250.00', '1 250 €', '1250.00 EUR', '1.250,00 €']) {
      expect(findPersonal(`please refund ${written} now`, scope)).toEqual({ value: written, why: 'argument_value' });
      expect(maskPersonal(`please refund ${written} now`, scope)).toBe('please refund <value> now');
    }
  });

  it('says a number that is no argument looks like a value', () => {
    expect(findPersonal('refund $99.50', scopeOf(indexOf(), [1250]))).toEqual({
      value: '$99.50',
      why: 'looks_like_value',
    });
  });

  it('masks one word of a many-word argument and a common word passed as an argument', () => {
    const index = indexOf('x Ana y', 'x Ana y', 'x ana');
    const scope = scopeOf(index, [{ passenger: 'Ana Pereira', note: 'urgent' }]);
    expect(findPersonal('now check ana in for that flight', scope)).toEqual({ value: 'ana', why: 'argument_value' });
    expect(maskPersonal('it is urgent', scope)).toBe('it is <value>');
  });

  it('never masks an argument value that is a word of the tool definition', () => {
    expect(maskPersonal('an aisle seat please', scopeOf(indexOf(), ['aisle']))).toBe('an aisle seat please');
  });
});

describe('maskPersonal: rare tokens and names', () => {
  it('masks a word seen in one conversation that is no common word', () => {
    const index = indexOf('book for pereira', 'another request');
    expect(findPersonal('book for pereira', scopeOf(index))).toEqual({ value: 'pereira', why: 'rare_token' });
  });

  it('leaves an uncommon lower-case word seen in enough conversations', () => {
    const index = indexOf(['export zorblax', 'a'], ['export zorblax', 'b'], ['export zorblax again', 'a']);
    expect(maskPersonal('export zorblax', scopeOf(index))).toBe('export zorblax');
    expect(maskPersonal('export zorblax', { ...scopeOf(index), minConversations: 3 })).toBe('export <value>');
  });

  it('counts distinct conversations, not texts', () => {
    const index = indexOf(['refund pereira', 'a'], ['pereira again', 'a'], ['and pereira', 'a']);
    expect(index.conversations.get('pereira')).toBe(1);
    expect(findPersonal('pereira', scopeOf(index))?.why).toBe('rare_token');
  });

  it('leaves an ordinary word one user typed once: "overpayment"', () => {
    const index = indexOf('claw back the overpayment please');
    expect(maskPersonal('claw back the overpayment please', scopeOf(index))).toBe('claw back the overpayment please');
  });

  it('masks a full name however many conversations have it; a single capitalised house term used in many is no value', () => {
    const texts = Array.from({ length: 20 }, () => 'refund the order of Ana Zorblax please');
    const index = indexOf(...texts);
    expect(index.conversations.get('zorblax')).toBe(20);
    expect(maskPersonal('refund the order of Ana Zorblax please', scopeOf(index))).toBe(
      'refund the order of <value> please',
    );
    expect(findPersonal('refund the order of Ana Zorblax please', scopeOf(index))?.why).toBe('name');
    expect(findPersonal('the Zorblax desk should take this claim', scopeOf(index))).toBeNull();
  });

  it('a word other requests say with another word in its place is a value, however many conversations typed it', () => {
    const names = ['Fintan', 'Marisol', 'Oriana'];
    const texts: [string, string][] = [];
    for (const [n, name] of names.entries()) {
      for (let c = 0; c < 3; c++) texts.push([`please book the room for ${name}`, `${name}-${c}`]);
    }
    for (let c = 0; c < 9; c++) texts.push([`send it to the Titan desk today`, `t${c}`]);
    const index = indexOf(...texts);
    expect(index.slotFillers.has('fintan')).toBe(true);
    expect(maskPersonal('please book the room for Fintan', scopeOf(index))).toBe('please book the room for <value>');
    expect(findPersonal('Fintan asked again', scopeOf(index))?.why).toBe('rare_token');
    expect(index.slotFillers.has('titan')).toBe(false);
    expect(findPersonal('send it to the Titan desk today', scopeOf(index))).toBeNull();
  });

  it('two uncommon words in one slot are not yet a slot of values', () => {
    const texts: [string, string][] = [];
    for (const name of ['Fintan', 'Marisol'])
      for (let c = 0; c < 3; c++) texts.push([`room for ${name}`, `${name}${c}`]);
    const index = indexOf(...texts);
    expect(findPersonal('room for Fintan', scopeOf(index))).toBeNull();
  });

  it('a single capitalised word is a value only while fewer than min_conversations conversations used it', () => {
    const many = Array.from({ length: 5 }, (_, i) => [`booked for Mr Kowalski ${i}`, `c${i}`] as [string, string]);
    const index = indexOf(...many);
    expect(findPersonal('booked for Mr Kowalski again', scopeOf(index))?.why).toBe('name');
    expect(findPersonal('Kowalski called again', scopeOf(index))).toBeNull();
    expect(findPersonal('Nowakowski called again', scopeOf(index))?.why).toBe('rare_token');
  });

  it('takes a capitalised word next to a name as part of it, but keeps a common verb that starts a sentence', () => {
    const index = indexOf('x', 'y');
    expect(maskPersonal('please refund John Smith today', scopeOf(index))).toBe('please refund <value> today');
    expect(maskPersonal('Call Pereira now', scopeOf(index))).toBe('Call <value> now');
  });

  it('reads the first word of a sentence as no name: after ".", "?", "!", ":" and a line break, and "I"', () => {
    const texts = Array.from({ length: 3 }, () => 'zorblax it');
    const scope = scopeOf(indexOf(...texts));
    for (const text of [
      'Zorblax it.',
      'Done. Zorblax it',
      'Why? Zorblax it',
      'Note: Zorblax it',
      'ok\nZorblax it',
      '"Zorblax" it',
    ]) {
      expect(maskPersonal(text, scope), text).toBe(text);
    }
    expect(maskPersonal('then I zorblax it', scope)).toBe('then I zorblax it');
    expect(maskPersonal("so I'm sure I've done it and it isn't done", scope)).toBe(
      "so I'm sure I've done it and it isn't done",
    );
    expect(maskPersonal("then Zorblax's it", scope)).toBe("then Zorblax's it");
    expect(maskPersonal('then Ana Zorblax it', scope)).toBe('then <value> it');
  });

  it('never masks a word of the tool definition, capitalised or rare', () => {
    const scope = scopeOf(indexOf('export to bibtex'));
    expect(maskPersonal('export it as BibTeX or to Spotify', scope)).toBe('export it as BibTeX or to Spotify');
    expect(maskPersonal('do my checkin', scope)).toBe('do my checkin');
  });

  it('masks names in an error and leaves days, months and languages', () => {
    const scope = scopeOf(indexOf('x', 'y'));
    expect(maskPersonal('Passenger Ana Pereira has no booking on Monday', scope)).toBe(
      'Passenger <value> has no booking on Monday',
    );
    expect(maskPersonal('translate it into Spanish in April', scope)).toBe('translate it into Spanish in April');
  });
});

describe('bounds', () => {
  it('indexes only the start of a long text', () => {
    const index = indexOf(`${'word '.repeat(INDEX_MAX_CHARS / 5)} zorblax`);
    expect(index.conversations.has('zorblax')).toBe(false);
  });

  it('cuts a long masked text and never cuts a value in half', () => {
    const pad = 'word '.repeat(Math.floor((MASK_MAX_CHARS - 10) / 5));
    const masked = maskPersonal(`${pad}mail ana.pereira@example.com and more ${'b '.repeat(5000)}`, EMPTY);
    expect(masked).toBe(`${pad}mail <value>`);
  });
});

/** Lower-case, spaces and punctuation removed: a value found "normalised" in a text. */
function squash(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

const FIRST = ['Ana', 'João', 'Carlos', 'Sofia', 'Tomasz', 'Priya', 'Fatima', 'Olumide', 'Ingrid', 'John', 'Maria'];
const LAST = ['Pereira', 'Silva', 'Mendes', 'Almeida', 'Kowalski', 'Raman', 'Haddad', 'Adeyemi', 'Solberg', 'Smith'];
const MONTHS = ['January', 'March', 'May', 'June', 'September', 'December'];
const STREETS = ['Augusta', 'Mayor', 'Baker', 'Oak', 'Garrett'];

const digits = (n: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));
const name = fc.tuple(fc.constantFrom(...FIRST), fc.constantFrom(...LAST)).map(([f, l]) => `${f} ${l}`);
const personalValue = fc.oneof(
  name,
  fc
    .tuple(fc.constantFrom(...FIRST), fc.constantFrom(...LAST), fc.constantFrom('example.com', 'mail.pt'))
    .map(([f, l, d]) => `${f}.${l}@${d}`.toLowerCase()),
  fc.tuple(digits(2), digits(3), digits(4)).map(([a, b, c]) => `+351 (${a}) ${b}-${c}`),
  fc
    .tuple(digits(4), digits(4), digits(4), digits(4), fc.constantFrom(' ', '-'))
    .map(([a, b, c, d, s]) => [a, b, c, d].join(s)),
  fc.tuple(digits(4), digits(4), digits(4), digits(4)).map((g) => `PT50 ${g.join(' ')} 5`),
  fc.integer({ min: 1, max: 99_999 }).map((n) => `$${n.toLocaleString('en-US')}.00`),
  fc.integer({ min: 1, max: 99_999 }).map((n) => `EUR ${n}`),
  fc.tuple(fc.integer({ min: 1, max: 28 }), fc.constantFrom(...MONTHS)).map(([d, m]) => `${d} ${m}`),
  fc.tuple(fc.constantFrom(...MONTHS), fc.integer({ min: 1, max: 28 })).map(([m, d]) => `${m} ${d}th`),
  fc.tuple(fc.integer({ min: 1, max: 300 }), fc.constantFrom(...STREETS)).map(([n, s]) => `${n} Rua ${s}`),
  fc.tuple(fc.integer({ min: 1, max: 300 }), fc.constantFrom(...STREETS)).map(([n, s]) => `${n}B ${s} Street`),
);
const TEMPLATES = [
  'please refund {} today',
  '{} wants to change the booking',
  'the error said: customer {} not found',
  'Send the invoice to {}.',
  'can you move it to {}? thanks',
  'Hi, this is about {} and nothing else',
];

describe('maskPersonal (property)', () => {
  it('leaves no generated personal value findable, exactly or normalised', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...TEMPLATES), personalValue), { minLength: 1, maxLength: 30 }),
        (requests) => {
          const texts = requests.map(([template, value]) => template.replace('{}', value));
          const index = indexOf(...texts);
          const scope = scopeOf(index, [], new Set());
          for (const [i, [, value]] of requests.entries()) {
            const masked = maskPersonal(texts[i] ?? '', scope);
            expect(masked).not.toContain(value);
            expect(squash(masked)).not.toContain(squash(value));
            expect(masked).not.toMatch(/<value>[\s,]*<value>/);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
