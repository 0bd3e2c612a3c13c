/**
 * Loads the ToolE data set (`TOOLE_DIR`, by default data/toole in this repository, MIT) and makes the
 * FIXED training / held-out split every evaluation uses. The split lives in code, seeded from each
 * tool's name, so every run and every engineer sees the same halves (README of the data set: "use a
 * split you fix in code and report held-out figures only").
 */
import { readFileSync } from 'node:fs';

/** The data folder: `TOOLE_DIR` when set, else `data/toole` in this repository. */
export const TOOLE_DIR = process.env.TOOLE_DIR
  ? new URL(`file://${process.env.TOOLE_DIR.replace(/\/?$/, '/')}`)
  : new URL('../data/toole/', import.meta.url);

/** One ToolE tool, its name made valid for Whetstone. */
export interface EvalTool {
  name: string;
  /** The name as ToolE spells it. */
  sourceName: string;
  description: string;
}

/** One labelled request. `index` is its row order in queries.csv (0 = first data row). */
export interface EvalQuery {
  text: string;
  tool: string;
  index: number;
}

export interface ToolE {
  tools: EvalTool[];
  queries: EvalQuery[];
}

export interface Split {
  training: EvalQuery[];
  heldOut: EvalQuery[];
}

/**
 * Maps a ToolE name to a valid tool name (docs/learning.md: `^[A-Za-z0-9_.\-/]{1,128}$`): every other
 * character becomes `_` ("PDF&URLTool" → "PDF_URLTool"). Applied to tools and labels alike.
 */
export function validToolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.\-/]/g, '_').slice(0, 128);
}

/**
 * RFC 4180 CSV: quoted fields may hold commas, newlines and doubled quotes (`""`). queries.csv has
 * all three (one request spans two lines), so a split on "," and "\n" would mislabel rows.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

/** Reads tools.json and queries.csv; throws (it is a script) when the data set is not where it should be. */
export function loadToolE(dir: URL = TOOLE_DIR): ToolE {
  const raw = JSON.parse(readFileSync(new URL('tools.json', dir), 'utf8')) as Record<string, string>;
  const tools = Object.entries(raw).map(([sourceName, description]) => ({
    name: validToolName(sourceName),
    sourceName,
    description,
  }));
  const rows = parseCsv(readFileSync(new URL('queries.csv', dir), 'utf8'));
  const header = rows.shift();
  if (header?.[0] !== 'Query' || header[1] !== 'Tool')
    throw new Error(`unexpected queries.csv header: ${String(header)}`);
  const queries: EvalQuery[] = [];
  rows.forEach((row, index) => {
    const [text, tool] = row;
    if (text === undefined || tool === undefined || row.length !== 2)
      throw new Error(`queries.csv row ${index + 2} has ${row.length} fields`);
    queries.push({ text, tool: validToolName(tool), index });
  });
  return { tools, queries };
}

/** FNV-1a of a string: the seed of a tool's shuffle. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** mulberry32: a tiny seeded PRNG, identical in every JavaScript runtime. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates with a given random source (copies; the input is not touched). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const a = out[i];
    const b = out[j];
    if (a === undefined || b === undefined) continue;
    out[i] = b;
    out[j] = a;
  }
  return out;
}

/**
 * The fixed split: per tool, its wordings shuffled with a PRNG seeded from the tool name; the first
 * half (rounded down) is training, the rest held-out. Per tool, so both halves cover every tool.
 * Both halves come back in file order.
 */
export function splitQueries(queries: readonly EvalQuery[]): Split {
  const byTool = new Map<string, EvalQuery[]>();
  for (const q of queries) {
    const list = byTool.get(q.tool);
    if (list === undefined) byTool.set(q.tool, [q]);
    else list.push(q);
  }
  const training: EvalQuery[] = [];
  const heldOut: EvalQuery[] = [];
  for (const [tool, wordings] of byTool) {
    const order = shuffled(wordings, mulberry32(fnv1a(tool)));
    const half = Math.floor(order.length / 2);
    training.push(...order.slice(0, half));
    heldOut.push(...order.slice(half));
  }
  const byIndex = (a: EvalQuery, b: EvalQuery): number => a.index - b.index;
  return { training: training.sort(byIndex), heldOut: heldOut.sort(byIndex) };
}

/** The first wording of each tool in file order (the cold-routing target set), one per tool. */
export function firstWordings(queries: readonly EvalQuery[]): EvalQuery[] {
  const seen = new Map<string, EvalQuery>();
  for (const q of queries) if (!seen.has(q.tool)) seen.set(q.tool, q);
  return [...seen.values()];
}
