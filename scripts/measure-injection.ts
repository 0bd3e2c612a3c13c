/**
 * False positives and catches of the learned-line check (src/core/safety.ts `checkLineText`,
 * docs/security.md "Learned lines"): how many benign texts it refuses or marks suspicious, and how
 * many injection strings get through.
 *   - ToolE requests (data/toole, every wording), each checked as an example request of its tool;
 *   - ToolE tool descriptions, each checked as a trace's draft definition;
 *   - realistic error texts (test/fixtures/benign-errors.json), each checked as a usage note
 *     quoting it (`Calls fail with "<error>".`, the extractive model's form) against a plain tool;
 *   - the injection corpus (test/fixtures/injection-corpus.json), as a request and as a quoted note.
 * Run: `npm run measure:injection` (`-- --list` prints every benign text that is refused or suspicious).
 */
import { readFileSync } from 'node:fs';
import { checkLineText, type LineCheck } from '../src/core/safety.ts';
import { loadToolE } from './eval-data.ts';

const list = process.argv.includes('--list');
const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../test/fixtures/${name}`, import.meta.url), 'utf8'));

interface Tally {
  total: number;
  refused: number;
  suspicious: number;
  reasons: Map<string, number>;
  examples: string[];
}

function tally(items: readonly { text: string; definition: string }[], wrap: (t: string) => string): Tally {
  const out: Tally = { total: 0, refused: 0, suspicious: 0, reasons: new Map(), examples: [] };
  for (const item of items) {
    out.total += 1;
    const check: LineCheck = checkLineText(wrap(item.text), { definition: item.definition });
    const why = check.refused !== null ? [check.refused] : check.suspicious;
    if (check.refused !== null) out.refused += 1;
    else if (check.suspicious.length > 0) out.suspicious += 1;
    else continue;
    for (const w of why) {
      const key = w.replace(/ \(.*$/, '');
      out.reasons.set(key, (out.reasons.get(key) ?? 0) + 1);
    }
    out.examples.push(`${check.refused !== null ? 'REFUSED' : 'held'}  ${item.text}  — ${why.join('; ')}`);
  }
  return out;
}

const pct = (n: number, d: number): string => `${((100 * n) / Math.max(d, 1)).toFixed(2)}%`;

function report(title: string, t: Tally): void {
  console.log(
    `${title}: ${t.total} texts, refused ${t.refused} (${pct(t.refused, t.total)}), ` +
      `suspicious ${t.suspicious} (${pct(t.suspicious, t.total)})`,
  );
  for (const [reason, n] of [...t.reasons].sort((a, b) => b[1] - a[1])) console.log(`    ${n}  ${reason}`);
  if (list) for (const e of t.examples) console.log(`      ${e}`);
}

const toole = loadToolE();
const description = new Map(toole.tools.map((t) => [t.name, `${t.name} ${t.description}`]));
const plainTool = 'lookup_order Look up an order by its id: its status and delivery date.';
const asNote = (error: string): string => `Calls fail with "${error.replace(/\s+/g, ' ').trim()}".`;

report(
  'ToolE requests as example requests',
  tally(
    toole.queries.map((q) => ({ text: q.text.replace(/\s+/g, ' ').trim(), definition: description.get(q.tool) ?? '' })),
    (t) => t,
  ),
);
report(
  'ToolE descriptions as draft definitions',
  tally(
    toole.tools.map((t) => ({ text: t.description, definition: '' })),
    (t) => t,
  ),
);
const errors = (fixture('benign-errors.json') as { errors: string[] }).errors;
report(
  'Benign error texts as quoted usage notes',
  tally(
    errors.map((text) => ({ text, definition: plainTool })),
    asNote,
  ),
);
const corpus = (fixture('injection-corpus.json') as { strings: { class: string; text: string }[] }).strings;
for (const [name, wrap] of [
  ['request', (t: string) => t],
  ['quoted note', asNote],
] as const) {
  const missed = corpus.filter((c) => {
    const check = checkLineText(wrap(c.text), { definition: plainTool });
    return check.refused === null && check.suspicious.length === 0;
  });
  const refused = corpus.filter((c) => checkLineText(wrap(c.text), { definition: plainTool }).refused !== null);
  console.log(
    `Injection corpus as a ${name}: ${corpus.length} strings, refused ${refused.length}, ` +
      `held for a person ${corpus.length - refused.length - missed.length}, let through ${missed.length}`,
  );
  for (const m of missed) console.log(`      LET THROUGH [${m.class}] ${JSON.stringify(m.text)}`);
}
