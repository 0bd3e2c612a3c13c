/**
 * The pure ranking behind `/route` (docs/learning.md): cosine similarity of hash (or model) vectors fused
 * with BM25 over the same embedding texts. Vectors catch spelling variants and shared sub-words;
 * BM25 knows which words are rare in this toolbox. On the ToolE training split the fusion beats
 * either alone (scripts/eval.ts --cold prints the held-out figures).
 */
import type { VectorMatch } from './ports.ts';
import type { RoutedTool } from '../schemas.ts';
import { companionTable } from './companions.ts';
import { buildLexicalIndex, compareIds, type LexicalIndex } from './lexical.ts';
import { routedWordings } from './routing-memory.ts';
import { asksSeveral, normalize, splitIdentifier } from './text.ts';

/** One tool as routing sees it: its name, its embedding text and that text's vector. */
export interface RoutingDoc {
  name: string;
  text: string;
  vector: Float32Array;
  /** The wordings of its routing memory: tools whose memories share wordings are companions. */
  memory?: readonly string[];
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
  /**
   * The name phrases (normalised words of a tool name) as a tree of words: a request's run of words
   * is followed from the word it starts at and stops at the first word no phrase continues with,
   * so finding the named tools costs a lookup or two per request word, whatever the toolbox.
   */
  readonly namePhrases: PhraseNode;
  /** Each tool's companion by position, the tool it serves requests with (src/core/companions.ts). */
  readonly companions: ReadonlyMap<number, number>;
}

/** One word of the name phrase tree: the words that may follow it, and the tools a phrase ending here names. */
export interface PhraseNode {
  readonly next: ReadonlyMap<string, PhraseNode>;
  /** Positions of the tools named by the phrase that ends with this word, in toolbox order. */
  readonly tools: readonly number[];
}

/**
 * The phrases by which a request names a tool: the words split from its identifier
 * (`get_weather`, `getWeather` → "get weather") and the identifier written as one word
 * ("getweather"). Only names of two words or more: a one-word name ("search") is an ordinary word,
 * and a request using it does not thereby name the tool.
 */
export function namePhrases(name: string): string[] {
  const split = normalize(splitIdentifier(name));
  if (split.split(' ').length < 2) return [];
  const whole = normalize(name).replace(/ /g, '');
  return whole === split ? [split] : [split, whole];
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
 * (one embedder); a mixed toolbox is a caller bug (re-embed first), so it throws. `companions` are
 * the docs' own (src/core/companions.ts), passed in by a caller that keeps their table.
 */
export function buildRoutingIndex(
  docs: readonly RoutingDoc[],
  companions: ReadonlyMap<number, number> = companionTable(docs.map((d) => d.memory ?? [])).companions,
): RoutingIndex {
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
  return {
    names: docs.map((d) => d.name),
    dimensions,
    matrix,
    positions,
    lexical,
    namePhrases: phraseTree(docs.map((d) => d.name)),
    companions,
  };
}

/** The name phrase tree of a toolbox's names (by position). */
function phraseTree(names: readonly string[]): PhraseNode {
  interface Building {
    next: Map<string, Building>;
    tools: number[];
  }
  const root: Building = { next: new Map(), tools: [] };
  names.forEach((name, i) => {
    for (const phrase of namePhrases(name)) {
      let node = root;
      for (const word of phrase.split(' ')) {
        let child = node.next.get(word);
        if (child === undefined) {
          child = { next: new Map(), tools: [] };
          node.next.set(word, child);
        }
        node = child;
      }
      if (!node.tools.includes(i)) node.tools.push(i);
    }
  });
  return root;
}

/**
 * The index with one tool's document replaced (same name, same position): what
 * `buildRoutingIndex` gives for the toolbox with that one document changed, built from this one
 * instead of from every document — the displacement re-check asks it once per wording it tries, at
 * up to 10,000 tools. `companions` are the companions of the changed toolbox (a `CompanionTable`
 * answers them as cheaply, src/core/companions.ts). This index is left as it was.
 */
export function withDoc(index: RoutingIndex, doc: RoutingDoc, companions: ReadonlyMap<number, number>): RoutingIndex {
  const position = index.positions.get(doc.name);
  if (position === undefined) throw new RangeError(`tool ${doc.name} is not in this index`);
  if (doc.vector.length !== index.dimensions)
    throw new RangeError(
      `tool ${doc.name} has a ${doc.vector.length}-dimension vector, the others ${index.dimensions}`,
    );
  const n = index.names.length;
  const matrix = index.matrix.slice();
  for (let j = 0; j < index.dimensions; j++) matrix[j * n + position] = doc.vector[j] ?? 0;
  return { ...index, matrix, lexical: index.lexical.withText(position, doc.text), companions };
}

/** Exact cosine (dot product of normalised vectors) of the query against every tool, by position. */
export function vectorScores(index: RoutingIndex, vector: Float32Array): Float64Array {
  const n = index.names.length;
  const d = index.dimensions;
  if (vector.length !== d) throw new RangeError(`query vector has ${vector.length} dimensions, the index ${d}`);
  const scores = new Float64Array(n);
  const dims: number[] = [];
  for (let j = 0; j < d; j++) if ((vector[j] ?? 0) !== 0) dims.push(j);
  let t = 0;
  for (; t + COLUMNS_PER_PASS <= dims.length; t += COLUMNS_PER_PASS)
    addEightColumns(scores, index.matrix, vector, dims.slice(t, t + COLUMNS_PER_PASS));
  for (; t < dims.length; t++) addColumns(scores, index.matrix, vector, dims[t] ?? 0);
  return scores;
}

/**
 * `vectorScore(index, vector)[position]` alone, summed in the same order as the scan, so the two
 * agree to the last bit: the re-check keeps a request's scores and rescores only the tool it changed.
 */
export function vectorScoreAt(index: RoutingIndex, vector: Float32Array, position: number): number {
  const n = index.names.length;
  const dims: number[] = [];
  for (let j = 0; j < index.dimensions; j++) if ((vector[j] ?? 0) !== 0) dims.push(j);
  const at = (u: number): number => {
    const j = dims[u] ?? 0;
    return (vector[j] ?? 0) * (index.matrix[j * n + position] ?? 0);
  };
  let score = 0;
  let t = 0;
  for (; t + COLUMNS_PER_PASS <= dims.length; t += COLUMNS_PER_PASS)
    score += at(t) + at(t + 1) + at(t + 2) + at(t + 3) + at(t + 4) + at(t + 5) + at(t + 6) + at(t + 7);
  for (; t < dims.length; t++) score += at(t);
  return score;
}

/**
 * Query dimensions summed per pass over the scores: one read-modify-write of a score
 * per eight column reads instead of per one, about 1.5× faster at 10,000 tools. The sum is
 * grouped differently from one column at a time, which moves a score by ~1e-16 at most.
 */
const COLUMNS_PER_PASS = 8;

/** scores[i] += q[j] · column j, for one dimension j. */
function addColumns(scores: Float64Array, matrix: Float32Array, vector: Float32Array, j: number): void {
  const n = scores.length;
  const q = vector[j] ?? 0;
  const column = matrix.subarray(j * n, j * n + n);
  for (let i = 0; i < n; i++) scores[i] = (scores[i] ?? 0) + q * (column[i] ?? 0);
}

/** scores[i] += Σ q[j] · column j over eight dimensions, in one pass. */
function addEightColumns(
  scores: Float64Array,
  matrix: Float32Array,
  vector: Float32Array,
  dims: readonly number[],
): void {
  const n = scores.length;
  const column = (u: number): Float32Array => matrix.subarray((dims[u] ?? 0) * n, (dims[u] ?? 0) * n + n);
  const weight = (u: number): number => vector[dims[u] ?? 0] ?? 0;
  const [c0, c1, c2, c3, c4, c5, c6, c7] = [
    column(0),
    column(1),
    column(2),
    column(3),
    column(4),
    column(5),
    column(6),
    column(7),
  ];
  const [w0, w1, w2, w3, w4, w5, w6, w7] = [
    weight(0),
    weight(1),
    weight(2),
    weight(3),
    weight(4),
    weight(5),
    weight(6),
    weight(7),
  ];
  for (let i = 0; i < n; i++) {
    const sum =
      w0 * (c0[i] ?? 0) +
      w1 * (c1[i] ?? 0) +
      w2 * (c2[i] ?? 0) +
      w3 * (c3[i] ?? 0) +
      w4 * (c4[i] ?? 0) +
      w5 * (c5[i] ?? 0) +
      w6 * (c6[i] ?? 0) +
      w7 * (c7[i] ?? 0);
    scores[i] = (scores[i] ?? 0) + sum;
  }
}

/**
 * Vector scores from a VectorIndex answer instead of the scan. Tools the answer does not name get
 * the lowest score it gave (their true score is no higher); names unknown to this index (a stale
 * Vectorize entry of a removed tool: it is eventually consistent) are ignored.
 */
function scoresFromMatches(
  index: RoutingIndex,
  matches: readonly VectorMatch[],
): { scores: Float64Array; candidates: Set<number> } {
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
function selectTop(
  names: readonly string[],
  scores: Float64Array,
  positions: Iterable<number> | 'all',
  k: number,
): RoutedTool[] {
  const best: Scored[] = [];
  const consider = (p: number): void => {
    const score = scores[p] ?? 0;
    const last = best[best.length - 1];
    if (last !== undefined && best.length === k && score < last.score) return;
    const entry = { name: names[p] ?? '', score };
    if (last !== undefined && best.length === k && !ranksBefore(entry, last)) return;
    let at = best.length;
    while (at > 0 && ranksBefore(entry, best[at - 1] ?? entry)) at--;
    best.splice(at, 0, entry);
    if (best.length > k) best.pop();
  };
  // The exact scan's candidates are every position: a plain loop (a generator costs ~0.3 ms at 10,000 tools).
  if (positions === 'all') for (let p = 0; p < scores.length; p++) consider(p);
  else for (const p of positions) consider(p);
  return best.map((b, i) => ({ name: b.name, rank: i + 1, score: b.score }));
}

/**
 * BM25's part of the fused score, by position, for the tools sharing a word with the request:
 * `lexicalWeight · bm25 / max(bm25)` (FusionConfig). Added to the vector scores, it gives the
 * score `rankTools` ranks by.
 */
export function lexicalShare(
  index: RoutingIndex,
  text: string,
  fusion: FusionConfig = DEFAULT_FUSION,
): Map<number, number> {
  const lexical = index.lexical.scorePositions(text);
  let maxLexical = 0;
  for (const s of lexical.values()) maxLexical = Math.max(maxLexical, s);
  const scale = maxLexical > 0 ? fusion.lexicalWeight / maxLexical : 0;
  // scorePositions answers a map of its own each call: scaled where it stands, no second map per /route.
  for (const [p, s] of lexical) lexical.set(p, s * scale);
  return lexical;
}

/**
 * Ranks the toolbox for one request: the `k` best tools, rank 1 first, ties broken by name so the
 * same request always gets the same answer. With `vectorMatches` (from Vectorize) the candidates are
 * those matches plus every tool BM25 found (every tool when that is fewer than k); without, every
 * tool is scored by the exact scan.
 */
export function rankTools(
  index: RoutingIndex,
  query: {
    text: string;
    vector: Float32Array;
    /** `vectorScores(index, vector)` when the caller already has it (read, never changed). */
    dense?: Float64Array;
  },
  k: number,
  vectorMatches?: readonly VectorMatch[],
  fusion: FusionConfig = DEFAULT_FUSION,
): RoutedTool[] {
  const n = index.names.length;
  if (n === 0 || k < 1) return [];
  const lexical = lexicalShare(index, query.text, fusion);
  const fromMatches = vectorMatches === undefined ? null : scoresFromMatches(index, vectorMatches);
  const scores = fromMatches?.scores ?? query.dense?.slice() ?? vectorScores(index, query.vector);
  for (const [p, s] of lexical) scores[p] = (scores[p] ?? 0) + s;
  if (fromMatches === null)
    return withNamedAndCompanion(index, scores, query.text, selectTop(index.names, scores, 'all', Math.floor(k)));
  // With a vector index answer the candidates are its matches and the lexical hits. When they are
  // fewer than k (an index not yet caught up, or down) the other tools follow them, by name, so k
  // tools still come back: nothing is known of them but that they scored no higher.
  const named = new Set([...fromMatches.candidates, ...lexical.keys()]);
  const top = selectTop(index.names, scores, named, Math.floor(k));
  if (top.length >= Math.min(Math.floor(k), n)) return withNamedAndCompanion(index, scores, query.text, top);
  const rest: number[] = [];
  for (let p = 0; p < n; p++) if (!named.has(p)) rest.push(p);
  const more = selectTop(index.names, scores, rest, Math.floor(k) - top.length);
  const all = [...top, ...more.map((t, i) => ({ ...t, rank: top.length + i + 1 }))];
  return withNamedAndCompanion(index, scores, query.text, all);
}

/** The named tools, then the first tool's companion, put among the top: the request's words are read for names once. */
function withNamedAndCompanion(
  index: RoutingIndex,
  scores: Float64Array,
  text: string,
  top: RoutedTool[],
): RoutedTool[] {
  const named = namedPositions(index, text);
  return withCompanion(index, scores, text, named, withNamed(index, scores, named, top));
}

/** Positions of the tools a request names: any run of its words equal to a name phrase. */
export function namedPositions(index: RoutingIndex, text: string): number[] {
  const root = index.namePhrases;
  if (root.next.size === 0) return [];
  // normalize leaves single spaces between words and none at either end: no empty word but in ''.
  const words = normalize(text).split(' ');
  const found = new Set<number>();
  for (let i = 0; i < words.length; i++) {
    let node = root.next.get(words[i] ?? '');
    for (let j = i + 1; node !== undefined; j++) {
      for (const p of node.tools) found.add(p);
      node = j < words.length ? node.next.get(words[j] ?? '') : undefined;
    }
  }
  return [...found];
}

/**
 * A request that names a tool gets it among its `k`: a named tool the scores left out takes the
 * place of the lowest-ranked tool that was not named (named tools themselves by score, at most k).
 * Nothing moves when every named tool is already there, so requests naming no tool rank as before.
 */
function withNamed(
  index: RoutingIndex,
  scores: Float64Array,
  named: readonly number[],
  top: RoutedTool[],
): RoutedTool[] {
  if (named.length === 0 || top.length === 0) return top;
  const inTop = new Set(top.map((t) => t.name));
  const missing = named
    .filter((p) => !inTop.has(index.names[p] ?? ''))
    .map((p) => ({ name: index.names[p] ?? '', score: scores[p] ?? 0 }))
    .sort((a, b) => (ranksBefore(a, b) ? -1 : 1));
  if (missing.length === 0) return top;
  const namedNames = new Set(named.map((p) => index.names[p] ?? ''));
  const kept = [...top];
  const added: Scored[] = [];
  for (const m of missing) {
    let drop = -1;
    for (let i = kept.length - 1; i >= 0; i--) {
      if (!namedNames.has(kept[i]?.name ?? '')) {
        drop = i;
        break;
      }
    }
    if (drop < 0) break;
    kept.splice(drop, 1);
    added.push(m);
  }
  return [...kept.map((t) => ({ name: t.name, score: t.score })), ...added].map((t, i) => ({
    name: t.name,
    rank: i + 1,
    score: t.score,
  }));
}

/** Tools a request needs at least besides the first and its companion: one alternative to the first. */
const COMPANION_ROOM = 3;

/**
 * The first-ranked tool's companion (src/core/companions.ts) is offered with it: when it is not
 * among the `k`, it takes the place of the lowest-ranked tool the request does not name. Only when
 * k leaves room for it and one more (COMPANION_ROOM): the runner-up, the best guess should the first
 * be wrong, is never the one given up. Only the first tool's: it is the one routing is surest the
 * request needs, and a companion of every offered tool could push out all alternatives.
 */
function withCompanion(
  index: RoutingIndex,
  scores: Float64Array,
  text: string,
  namedTools: readonly number[],
  top: RoutedTool[],
): RoutedTool[] {
  const first = top[0];
  if (first === undefined || top.length < COMPANION_ROOM || index.companions.size === 0 || !asksSeveral(text))
    return top;
  const companion = index.companions.get(index.positions.get(first.name) ?? -1);
  const name = companion === undefined ? undefined : index.names[companion];
  if (companion === undefined || name === undefined || top.some((t) => t.name === name)) return top;
  const named = new Set(namedTools.map((p) => index.names[p]));
  let drop = -1;
  for (let i = top.length - 1; i >= 2 && drop < 0; i--) if (!named.has(top[i]?.name)) drop = i;
  if (drop < 0) return top;
  const kept = top.filter((_, i) => i !== drop).map((t) => ({ name: t.name, score: t.score }));
  return [...kept, { name, score: scores[companion] ?? 0 }].map((t, i) => ({ ...t, rank: i + 1 }));
}

/** The argument names of a JSON-Schema object: the keys of its top-level `properties`. */
function argumentNames(parameters: Record<string, unknown>): string[] {
  const properties = parameters.properties;
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return [];
  return Object.keys(properties);
}

/**
 * A tool row's embedding text (docs/learning.md): name + description (the augmented one, else the docstring)
 * + argument names + every example request + every wording of its routing memory (routing reads
 * memory on both sides, lexical and dense; the model view never does). Names and argument names are split into words
 * (`get_weather` → "get weather") so they meet the words of a request. Notes, "Not for" lines and
 * the example call are never part of it: text that says what a tool is not for attracts exactly
 * those requests.
 */
export function embeddingText(tool: EmbeddedTool): string {
  const { head, examples } = embeddingParts(tool);
  return examples === null ? head : `${head}\n${examples}`;
}

/** A tool as routing reads it: its embedding text, its vector, and its memory's wordings. */
export function routingDoc(tool: EmbeddedTool, vector: Float32Array): RoutingDoc {
  return {
    name: tool.name,
    text: embeddingText(tool),
    vector,
    memory: routedWordings(tool.memory ?? []).map((w) => w.text),
  };
}

/** What a row's embedding text is made of (docs/learning.md). */
export interface EmbeddedTool {
  name: string;
  description: string | null;
  docstring: string;
  parameters: Record<string, unknown>;
  examples: readonly { text: string }[];
  /** Routing memory: wordings of requests the tool served (src/core/routing-memory.ts); pending ones are not read. */
  memory?: readonly { text: string; pending?: readonly string[] }[];
}

/**
 * The embedding text in its two parts: the head (name, description, argument names: what the
 * author wrote) and the example requests, one a line (null when there are none). Together they are
 * exactly `embeddingText`; `toolVector` embeds them apart.
 */
export function embeddingParts(tool: EmbeddedTool): { head: string; examples: string | null } {
  const args = argumentNames(tool.parameters).map(splitIdentifier);
  const nonEmpty = (parts: readonly string[]): string[] => parts.filter((p) => p.trim() !== '');
  const examples = nonEmpty([...tool.examples, ...routedWordings(tool.memory ?? [])].map((e) => e.text));
  return {
    head: nonEmpty([splitIdentifier(tool.name), tool.description ?? tool.docstring, args.join(', ')]).join('\n'),
    examples: examples.length > 0 ? examples.join('\n') : null,
  };
}

/**
 * How much a row's example requests weigh in its vector against its head. One vector of the whole
 * text lets twelve short requests outweigh the one description they paraphrase (each adds as many
 * words), so a tool's vector drifts towards the few wordings it learned and away from what it does.
 * Chosen on a validation carve of the ToolE training split, never the held-out half (README
 * "Evaluation"): with the same 12 learned examples per tool, R@5 80.5% for one vector of the whole
 * text, 84.0% at weights 0.2-0.3, 83.1% at 0.6; R@1 54.6% → 59.7%.
 */
export const EXAMPLE_WEIGHT = 0.25;

/**
 * A row's vector: the unit vector along head + EXAMPLE_WEIGHT · examples (each made unit first),
 * both from the same embedder; a row without examples keeps its head's vector as the embedder gave
 * it, i.e. the embedding of its embedding text. One vector per row, so routing costs the same
 * whatever a row has learned.
 */
export function toolVector(
  head: Float32Array,
  examples: Float32Array | null,
  weight: number = EXAMPLE_WEIGHT,
): Float32Array {
  if (examples === null) return head;
  const h = scaleOf(head);
  const e = weight * scaleOf(examples);
  const out = new Float32Array(head.length);
  for (let j = 0; j < head.length; j++) out[j] = h * (head[j] ?? 0) + e * (examples[j] ?? 0);
  const norm = scaleOf(out);
  for (let j = 0; j < out.length; j++) out[j] = (out[j] ?? 0) * norm;
  return out;
}

/** 1 / length of a vector (0 for the zero vector): models' vectors are not all exactly unit. */
function scaleOf(v: Float32Array): number {
  let sum = 0;
  for (const x of v) sum += x * x;
  return sum > 0 ? 1 / Math.sqrt(sum) : 0;
}
