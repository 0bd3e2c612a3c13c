import { describe, expect, it } from 'vitest';
import { isCommonWord, isCommonWordNotCompound } from '../../src/core/common-words.ts';
import { findValueSpans, looksLikeValue } from '../../src/core/values.ts';

/** The values found in a text, as written, with their kind. */
function found(text: string): string[] {
  return findValueSpans(text).map((s) => `${text.slice(s.start, s.end)}:${s.kind}`);
}

/** Each text holds exactly its listed values (as `found` writes them); a failure names the text. */
function expectFound(cases: Record<string, string[]>): void {
  for (const [text, values] of Object.entries(cases)) expect(found(text), text).toEqual(values);
}

describe('findValueSpans', () => {
  it('takes money whole, with its symbol, code or word, in English and European formats', () => {
    expectFound({
      'pay $1,250.00 now': ['$1,250.00:money'],
      'it was 1 250,00 € last time': ['1 250,00 €:money'],
      'EUR 40 or 40 euros or £7': ['EUR 40:money', '40 euros:money', '£7:money'],
    });
  });

  it('takes dates with English month names and numeric dates, and leaves "may" the verb', () => {
    expectFound({
      'on 3 May': ['3 May:date'],
      'by May 3rd please': ['May 3rd:date'],
      'the 3rd of May 2026': ['3rd of May 2026:date'],
      'from 2026-05-03 to 03/05/2026': ['2026-05-03:date', '03/05/2026:date'],
      'I may go in May': [],
    });
  });

  it('takes e-mails and URLs, leaving the sentence punctuation after them', () => {
    expectFound({
      'mail ana.pereira@example.com!': ['ana.pereira@example.com:email'],
      'see https://example.com/a?b=c. Or www.shop.pt, or acme.com': [
        'https://example.com/a?b=c:url',
        'www.shop.pt:url',
        'acme.com:url',
      ],
    });
  });

  it('takes phone numbers with "+", spaces, dashes and parentheses as one value', () => {
    expectFound({
      'call +351 (21) 123-4567 today': ['+351 (21) 123-4567:phone'],
      'or (555) 123 4567': ['(555) 123 4567:phone'],
    });
  });

  it('takes card numbers with spaces or dashes, and IBANs', () => {
    expectFound({
      'card 4111 1111 1111 1111': ['4111 1111 1111 1111:card'],
      'card 4111-1111-1111-1111': ['4111-1111-1111-1111:card'],
      'IBAN PT50 0002 0123 1234 5678 9015 4 please': ['PT50 0002 0123 1234 5678 9015 4:iban'],
    });
  });

  it('takes street addresses in several languages, names of the street included', () => {
    expectFound({
      'ship to 221B Baker Street': ['221B Baker Street:address'],
      'at 12 Rua Augusta': ['12 Rua Augusta:address'],
      'in Calle Mayor 5 now': ['Calle Mayor 5:address'],
      'near Rue de Rivoli': ['Rue de Rivoli:address'],
      'send to Hauptstraße 5': ['Hauptstraße 5:address'],
      'lives on Baker Street': ['Baker Street:address'],
      '12 Main St.': ['12 Main St.:address'],
    });
  });

  it('takes the town written after a street address with it, and no town after anything else', () => {
    expectFound({
      'the summary at Via Garibaldi 12, Bologna': ['Via Garibaldi 12, Bologna:address'],
      'ship to 221B Baker Street, London today': ['221B Baker Street, London:address'],
      'deliver to 12 Rua Augusta, Vila Nova de Gaia': ['12 Rua Augusta, Vila Nova de Gaia:address'],
      'order 4471, Bologna office': ['4471:digits'],
    });
  });

  it('takes any token with a digit, and only the number when no street follows', () => {
    expectFound({
      'cancel my order 4471-XK please': ['4471-XK:digits'],
      'I have 2 close friends': ['2:digits'],
    });
  });

  it('finds nothing in an ordinary request', () => {
    expectFound({ 'claw back the overpayment please': [] });
  });
});

describe('looksLikeValue', () => {
  it('is true for a token with a digit, an e-mail or a URL, false for a word', () => {
    expect(looksLikeValue('CW-111111')).toBe(true);
    expect(looksLikeValue('ana@example.com')).toBe(true);
    expect(looksLikeValue('https://example.com')).toBe(true);
    expect(looksLikeValue('refund')).toBe(false);
    expect(looksLikeValue('  ')).toBe(false);
  });
});

describe('isCommonWord', () => {
  it('knows ordinary words, their inflections and compounds of two', () => {
    for (const word of [
      'overpayment',
      'overpayments',
      'cancel',
      'cancelled',
      'cancellation',
      'refund',
      'reschedule',
      'rebooking',
      'itinerary',
      'recovery',
      'weather',
      'quickly',
      'Café',
    ]) {
      expect(isCommonWord(word), word).toBe(true);
    }
  });

  it('does not know names, places or jargon', () => {
    // "checkin": a two-letter tail would make Martin and Robin common; a check-in tool has the word in its definition.
    // "lisbon": a city names where one person goes; masking it costs an example its place, nothing more.
    for (const word of ['pereira', 'lisbon', 'bibtex', 'checkin', 'zorblax', 'maria']) {
      expect(isCommonWord(word), word).toBe(false);
    }
  });

  it('takes no compound for the name test: "Goldman" is gold + man, and a surname', () => {
    expect(isCommonWord('goldman')).toBe(true);
    expect(isCommonWordNotCompound('goldman')).toBe(false);
    expect(isCommonWordNotCompound('payments')).toBe(true);
  });

  it('knows days, months and languages, so "on Monday" and "into Spanish" are no names', () => {
    expect(isCommonWordNotCompound('Monday')).toBe(true);
    expect(isCommonWordNotCompound('Spanish')).toBe(true);
  });
});
