/**
 * What the privacy rule costs on ordinary requests (docs/security.md "Personal values"): over the
 * ToolE wordings, which hold no personal value, how many words and wordings get a `<value>`. Each
 * wording is masked with its labelled tool's definition as the vocabulary, against two logs:
 * - alone: the log is that one wording (a new agent: every uncommon word is rare);
 * - all: the log is every wording, each in its own conversation (rarity counted over all of them).
 * Run: `npx tsx scripts/measure-privacy.ts`.
 */
import { findValueSpans } from '../src/core/values.ts';
import {
  buildPrivacyIndex,
  findPersonal,
  maskPersonal,
  type PersonalReason,
  type PrivacyIndex,
  toolVocabulary,
} from '../src/core/privacy.ts';
import { loadToolE } from './eval-data.ts';

const MIN_CONVERSATIONS = 2;
const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu;

const { tools, queries } = loadToolE();
const vocabularies = new Map(
  tools.map((t) => [t.name, toolVocabulary({ name: t.sourceName, description: t.description, parameters: {} })]),
);
const all = buildPrivacyIndex(queries.map((q) => ({ text: q.text, conversation: String(q.index) })));

interface Tally {
  wordings: number;
  masked: number;
  words: number;
  maskedWords: number;
  why: Record<PersonalReason, number>;
  top: Map<string, number>;
  ms: number;
}

function measure(indexFor: (text: string, i: number) => PrivacyIndex): Tally {
  const tally: Tally = {
    wordings: 0,
    masked: 0,
    words: 0,
    maskedWords: 0,
    why: { looks_like_value: 0, argument_value: 0, rare_token: 0, name: 0 },
    top: new Map(),
    ms: 0,
  };
  for (const [i, q] of queries.entries()) {
    const scope = {
      index: indexFor(q.text, i),
      minConversations: MIN_CONVERSATIONS,
      vocabulary: vocabularies.get(q.tool) ?? new Set<string>(),
      values: [],
    };
    const started = performance.now();
    const masked = maskPersonal(q.text, scope);
    tally.ms += performance.now() - started;
    const words = q.text.match(WORD) ?? [];
    const kept = new Set(masked.match(WORD) ?? []);
    tally.wordings++;
    tally.words += words.length;
    if (masked === q.text) continue;
    tally.masked++;
    for (const w of words) {
      if (kept.has(w)) continue;
      tally.maskedWords++;
      tally.top.set(w, (tally.top.get(w) ?? 0) + 1);
    }
    let rest = q.text;
    for (let found = findPersonal(rest, scope); found; found = findPersonal(rest, scope)) {
      tally.why[found.why]++;
      rest = rest.replace(found.value, ' ');
    }
  }
  return tally;
}

function report(label: string, t: Tally): void {
  const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;
  console.log(`${label}:`);
  console.log(`  wordings with a <value>: ${t.masked} of ${t.wordings} (${pct(t.masked, t.wordings)})`);
  console.log(`  words masked: ${t.maskedWords} of ${t.words} (${pct(t.maskedWords, t.words)})`);
  console.log(`  values by reason: ${JSON.stringify(t.why)}`);
  const top = [...t.top].sort((a, b) => b[1] - a[1]).slice(0, 25);
  console.log(`  most masked: ${top.map(([w, n]) => `${w} ${n}`).join(', ')}`);
  console.log(`  mask time: ${(t.ms / t.wordings).toFixed(3)} ms a wording`);
}

const withDigits = queries.filter((q) => findValueSpans(q.text).length > 0).length;
console.log(
  `ToolE: ${queries.length} wordings, ${tools.length} tools; ${withDigits} wordings hold a value by its look`,
);
const started = performance.now();
buildPrivacyIndex(queries.map((q) => ({ text: q.text, conversation: String(q.index) })));
console.log(`index of all wordings built in ${(performance.now() - started).toFixed(0)} ms`);
report(
  'each wording alone (its own log)',
  measure((text) => buildPrivacyIndex([{ text, conversation: 'one' }])),
);
report(
  'counted over all wordings, one conversation each',
  measure(() => all),
);
