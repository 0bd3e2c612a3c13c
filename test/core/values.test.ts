import { describe, expect, it } from 'vitest';
import { isCommonWord, isCommonWordNotCompound } from '../../src/core/common-words.ts';
import { findValueSpans, looksLikeValue } from '../../src/core/values.ts';

/** The values found in a text, as written, with their kind. */
function found(text: string): string[] {
  return findValueSpans(text).map((s) => `${text.slice(s.start, s.end)}:${s.kind}`);
}

describe('findValueSpans', () => {
  it('takes money whole, with its symbol, code or word, in English and European formats', () => {
    expect(found('pay $1,250.00 now')).toEqual(['$1,250.00:money']);
    expect(found('it was 1 250,00 € last time')).toEqual(['1 250,00 €:money']);
    expect(found('EUR 40 or 40 euros or £7')).toEqual(['EUR 40:money', '40 euros:money', '£7:money']);
  });

  it('takes dates with English month names and numeric dates, and leaves "may" the verb', () => {
    expect(found('on 3 May')).toEqual(['3 May:date']);
    expect(found('by May 3rd please')).toEqual(['May 3rd:date']);
    expect(found('the 3rd of May 2026')).toEqual(['3rd of May 2026:date']);
    expect(found('from 2026-05-03 to 03/05/2026')).toEqual(['2026-05-03:date', '03/05/2026:date']);
    expect(found('I may go in May')).toEqual([]);
  });

  it('takes e-mails and URLs, leaving the sentence punctuation after them', () => {
    expect(found('mail ana.pereira@example.com!')).toEqual(['ana.pereira@example.com:email']);
    expect(found('see https://example.com/a?b=c. Or www.shop.pt, or acme.com')).toEqual([
      'https://example.com/a?b=c:url',
      'www.shop.pt:url',
      'acme.com:url',
    ]);
  });

  it('takes phone numbers with "+", spaces, dashes and parentheses as one value', () => {
    expect(found('call +351 (21) 123-4567 today')).toEqual(['+351 (21) 123-4567:phone']);
    expect(found('or (555) 123 4567')).toEqual(['(555) 123 4567:phone']);
  });

  it('takes card numbers with spaces or dashes, and IBANs', () => {
    expect(found('card 4111 1111 1111 1111')).toEqual(['4111 1111 1111 1111:card']);
    expect(found('card 4111-1111-1111-1111')).toEqual(['4111-1111-1111-1111:card']);
    expect(found('IBAN PT50 0002 0123 1234 5678 9015 4 please')).toEqual(['PT50 0002 0123 1234 5678 9015 4:iban']);
  });

  it('takes street addresses in several languages, names of the street included', () => {
    expect(found('ship to 221B Baker Street')).toEqual(['221B Baker Street:address']);
    expect(found('at 12 Rua Augusta')).toEqual(['12 Rua Augusta:address']);
    expect(found('in Calle Mayor 5 now')).toEqual(['Calle Mayor 5:address']);
    expect(found('near Rue de Rivoli')).toEqual(['Rue de Rivoli:address']);
    expect(found('send to Hauptstraße 5')).toEqual(['Hauptstraße 5:address']);
    expect(found('lives on Baker Street')).toEqual(['Baker Street:address']);
    expect(found('12 Main St.')).toEqual(['12 Main St.:address']);
  });

  it('takes the town written after a street address with it, and no town after anything else', () => {
    expect(found('the summary at Via Garibaldi 12, Bologna')).toEqual(['Via Garibaldi 12, Bologna:address']);
    expect(found('ship to 221B Baker Street, London today')).toEqual(['221B Baker Street, London:address']);
    expect(found('deliver to 12 Rua Augusta, Vila Nova de Gaia')).toEqual([
      '12 Rua Augusta, Vila Nova de Gaia:address',
    ]);
    expect(found('order 4471, Bologna office')).toEqual(['4471:digits']);
  });

  it('takes any token with a digit, and only the number when no street follows', () => {
    expect(found('cancel my order 4471-XK please')).toEqual(['4471-XK:digits']);
    expect(found('I have 2 close friends')).toEqual(['2:digits']);
  });

  it('finds nothing in an ordinary request', () => {
    expect(found('claw back the overpayment please')).toEqual([]);
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
