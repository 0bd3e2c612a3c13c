/**
 * The pure ranking behind `/route` (SPEC §4): cosine similarity of hash (or model) vectors fused
 * with BM25 over the same embedding texts. Vectors catch spelling variants and shared sub-words;
 * BM25 knows which words are rare in this toolbox. On the ToolE training split the fusion beats
 * either alone (scripts/eval.ts --cold prints the held-out figures).
 */
import type { VectorMatch } from './ports.ts';
import type { RoutedTool } from '../schemas.ts';
import { buildLexicalIndex, compareIds, type LexicalIndex } from './lexical.ts';
import { splitIdentifier } from './text.ts';

/** One tool as routing sees it: its name, its embedding text and that text's vector. */
export interface RoutingDoc {
  name: string;
  text: string;
  vector: Float32Array;
}

/** A built routing index for one agent's toolbox (immutable: rebuild when a tool changes). */
export interface RoutingIndex {
  readonly names: readonly string[];
  readonly dimensions: number;
  /**
   * The tool vectors dimension-major (`matrix[j * tools + i]` = dimension j of tool i), one
   * contiguous block: the scan walks one column per non-zero query dimension, a stride-1 loop, and
   * skips the dimensions a short request leaves at zero (about half of them for hash vectors).
   */
  readonly matrix: Float32Array;
  readonly positions: ReadonlyMap<string, number>;
  readonly lexical: LexicalIndex;
}

/**
 * How vector and BM25 scores are combined: fused = cosine + lexicalWeight · bm25 / max(bm25).
 * BM25 is divided by the query's best BM25 score so its scale does not depend on query length or
 * toolbox size. Chosen on the ToolE training split only: weights 0.5-1 form a plateau (R@5 63.6-63.7%
 * against 56.8% for vectors alone and 63.0% for BM25 alone); reciprocal-rank fusion (K 5-60) and
 * z-score fusion scored no better.
 */
export interface FusionConfig {
  lexicalWeight: number;
}

export const DEFAULT_FUSION: FusionConfig = { lexicalWeight: 0.7 };

/**
 * Precomputes the contiguous vector matrix and the BM25 index. All vectors must have one length
 * (one embedder); a mixed toolbox is a caller bug (re-embed first), so it throws.
 */
export function buildRoutingIndex(docs: readonly RoutingDoc[]): RoutingIndex {
  const n = docs.length;
  const dimensions = docs[0]?.vector.length ?? 0;
  const matrix = new Float32Array(n * dimensions);
  const positions = new Map<string, number>();
  docs.forEach((doc, i) => {
    if (doc.vector.length !== dimensions) {
      throw new RangeError(`tool ${doc.name} has a ${doc.vector.length}-dimension vector, the others ${dimensions}`);
    }
    for (let j = 0; j < dimensions; j++) matrix[j * n + i] = doc.vector[j] ?? 0;
    positions.set(doc.name, i);
  });
  const lexical = buildLexicalIndex(docs.map((d) => ({ id: d.name, text: d.text })));
  return { names: docs.map((d) => d.name), dimensions, matrix, positions, lexical };
}

/** Exact cosine (dot product of normalised vectors) of the query against every tool, by position. */
export function vectorScores(index: RoutingIndex, vector: Float32Array): Float64Array {
  const n = index.names.length;
  const d = index.dimensions;
  if (vector.length !== d) throw new RangeError(`query vector has ${vector.length} dimensions, the index ${d}`);
  const scores = new Float64Array(n);
  const m = index.matrix;
  for (let j = 0; j < d; j++) {
    const q = vector[j] ?? 0;
    if (q === 0) continue;
    const column = j * n;
    for (let i = 0; i < n; i++) scores[i] = (scores[i] ?? 0) + q * (m[column + i] ?? 0);
  }
  return scores;
}

/**
 * Vector scores from a VectorIndex answer instead of the scan. Tools the answer does not name get
 * the lowest score it gave (their true score is no higher); names unknown to this index (a stale
 * Vectorize entry of a removed tool: it is eventually consistent) are ignored.
 */
function scoresFromMatches(index: RoutingIndex, matches: readonly VectorMatch[]): { scores: Float64Array; candidates: Set<number> } {
  const candidates = new Set<number>();
  let floor = Infinity;
  for (const match of matches) if (index.positions.has(match.id)) floor = Math.min(floor, match.score);
  const scores = new Float64Array(index.names.length).fill(Number.isFinite(floor) ? floor : 0);
  for (const match of matches) {
    const position = index.positions.get(match.id);
    if (position === undefined) continue;
    scores[position] = match.score;
    candidates.add(position);
  }
  return { scores, candidates };
}

interface Scored {
  name: string;
  score: number;
}

function ranksBefore(a: Scored, b: Scored): boolean {
  return a.score > b.score || (a.score === b.score && compareIds(a.name, b.name) < 0);
}

/**
 * Keeps the best `k` positions, best first, ties by name. A bounded insertion list: most positions
 * fail the first comparison against the current k-th, so this is ~O(n) for the small k of /route.
 */
function selectTop(names: readonly string[], scores: Float64Array, positions: Iterable<number>, k: number): RoutedTool[] {
  const best: Scored[] = [];
  for (const p of positions) {
    const score = scores[p] ?? 0;
    const last = best[best.length - 1];
    if (last !== undefined && best.length === k && score < last.score) continue;
    const entry = { name: names[p] ?? '', score };
    if (last !== undefined && best.length === k && !ranksBefore(entry, last)) continue;
    let at = best.length;
    while (at > 0 && ranksBefore(entry, best[at - 1] ?? entry)) at--;
    best.splice(at, 0, entry);
    if (best.length > k) best.pop();
  }
  return best.map((b, i) => ({ name: b.name, rank: i + 1, score: b.score }));
}

/** 0, 1, …, n − 1: every tool is a candidate of the exact scan. */
function* allPositions(n: number): Generator<number> {
  for (let i = 0; i < n; i++) yield i;
}

/**
 * Ranks the toolbox for one request: the `k` best tools, rank 1 first, ties broken by name so the
 * same request always gets the same answer. With `vectorMatches` (from Vectorize) the candidates are
 * those matches plus every tool BM25 found; without, every tool is scored by the exact scan.
 */
export function rankTools(
  index: RoutingIndex,
  query: { text: string; vector: Float32Array },
  k: number,
  vectorMatches?: readonly VectorMatch[],
  fusion: FusionConfig = DEFAULT_FUSION,
): RoutedTool[] {
  const n = index.names.length;
  if (n === 0 || k < 1) return [];
  const lexical = index.lexical.scorePositions(query.text);
  let maxLexical = 0;
  for (const s of lexical.values()) maxLexical = Math.max(maxLexical, s);
  const lexicalScale = maxLexical > 0 ? fusion.lexicalWeight / maxLexical : 0;

  const fromMatches = vectorMatches === undefined ? null : scoresFromMatches(index, vectorMatches);
  const scores = fromMatches?.scores ?? vectorScores(index, query.vector);
  for (const [p, s] of lexical) scores[p] = (scores[p] ?? 0) + s * lexicalScale;
  const candidates = fromMatches === null ? allPositions(n) : new Set([...fromMatches.candidates, ...lexical.keys()]);
  return selectTop(index.names, scores, candidates, Math.floor(k));
}

/** The argument names of a JSON-Schema object: the keys of its top-level `properties`. */
function argumentNames(parameters: Record<string, unknown>): string[] {
  const properties = parameters.properties;
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return [];
  return Object.keys(properties);
}

/**
 * A tool row's embedding text (SPEC §4): name + description (the augmented one, else the docstring)
 * + argument names + every example request. Names and argument names are split into words
 * (`get_weather` → "get weather") so they meet the words of a request. Notes, "Not for" lines and
 * the example call are never part of it: text that says what a tool is not for attracts exactly
 * those requests.
 */
export function embeddingText(tool: {
  name: string;
  description: string | null;
  docstring: string;
  parameters: Record<string, unknown>;
  examples: readonly { text: string }[];
}): string {
  const args = argumentNames(tool.parameters).map(splitIdentifier);
  const parts = [splitIdentifier(tool.name), tool.description ?? tool.docstring, args.join(', ')];
  for (const example of tool.examples) parts.push(example.text);
  return parts.filter((p) => p.trim() !== '').join('\n');
}
