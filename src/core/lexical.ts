/**
 * An in-memory BM25 index over tool embedding texts. It complements the hash vectors: BM25 knows
 * which words are rare in this agent's toolbox (idf), which a stateless embedder cannot.
 * Inverted index with postings, so a query touches only the tools that share one of its words.
 */
import { tokenize } from './text.ts';

/**
 * BM25 parameters: the textbook k1 = 1.2, b = 0.75. On the ToolE training split b = 0.5 was under a
 * point better on cold descriptions; the textbook b is kept because learned examples make tool texts
 * long and uneven, where length normalisation earns its keep.
 */
export interface Bm25Params {
  k1: number;
  b: number;
}

export const DEFAULT_BM25: Bm25Params = { k1: 1.2, b: 0.75 };

/** One scored document. */
export interface LexicalHit {
  id: string;
  score: number;
}

/** A built BM25 index (immutable: rebuild it when the toolbox changes). */
export interface LexicalIndex {
  readonly size: number;
  /** The ids in build order (a document's position is its index into this list). */
  readonly ids: readonly string[];
  /** Distinct words, and (word, document) postings: what the index's memory grows with. */
  readonly terms: number;
  readonly postings: number;
  /** BM25 score of every document sharing a word with the query, by position; others are absent. */
  scorePositions(query: string): Map<number, number>;
  /** BM25 score of every document sharing a word with the query, by id. */
  score(query: string): Map<string, number>;
  /** The best `n` documents, best first, ties broken by id. */
  top(query: string, n: number): LexicalHit[];
  /**
   * The index with the document at `position` holding `text` instead: the same scores as building
   * it again with that one text changed, in time that grows with the words of the two texts (plus a
   * copy of the term table), not with the toolbox. This index is left as it was.
   */
  withText(position: number, text: string): LexicalIndex;
}

interface Posting {
  docs: number[];
  tfs: number[];
}

/** A text's term frequencies, and its length in tokens. */
function termCounts(text: string): { tf: Map<string, number>; length: number } {
  const tokens = tokenize(text);
  const tf = new Map<string, number>();
  for (const token of tokens) tf.set(token, (tf.get(token) ?? 0) + 1);
  return { tf, length: tokens.length };
}

/** Term → postings, plus each document's length in tokens. */
function buildPostings(docs: readonly { text: string }[]): { postings: Map<string, Posting>; lengths: Float64Array } {
  const postings = new Map<string, Posting>();
  const lengths = new Float64Array(docs.length);
  docs.forEach((doc, position) => {
    const { tf, length } = termCounts(doc.text);
    lengths[position] = length;
    for (const [term, count] of tf) {
      let posting = postings.get(term);
      if (posting === undefined) {
        posting = { docs: [], tfs: [] };
        postings.set(term, posting);
      }
      posting.docs.push(position);
      posting.tfs.push(count);
    }
  });
  return { postings, lengths };
}

/**
 * Builds the index. idf uses the non-negative Lucene form ln(1 + (N − n + 0.5)/(n + 0.5)), so a
 * word present in most tools still counts a little instead of subtracting.
 */
export function buildLexicalIndex(
  docs: readonly { id: string; text: string }[],
  params: Bm25Params = DEFAULT_BM25,
): LexicalIndex {
  const { postings, lengths } = buildPostings(docs);
  return indexOf(
    docs.map((d) => d.id),
    postings,
    lengths,
    params,
  );
}

/** First index in a posting's ascending document list at or after `position`. */
function lowerBound(docs: readonly number[], position: number): number {
  let lo = 0;
  let hi = docs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((docs[mid] ?? 0) < position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `postings` with the document at `position` holding the term counts `tf`: postings of other terms
 * are shared, the changed ones copied (document lists stay ascending, as a build writes them), and
 * a term no document holds any more is gone, as it would be from a build.
 */
function replacedPostings(
  postings: ReadonlyMap<string, Posting>,
  position: number,
  tf: ReadonlyMap<string, number>,
): Map<string, Posting> {
  const next = new Map(postings);
  for (const [term, posting] of postings) {
    const at = lowerBound(posting.docs, position);
    if (posting.docs[at] !== position || tf.has(term)) continue;
    if (posting.docs.length === 1) next.delete(term);
    else
      next.set(term, {
        docs: posting.docs.filter((_, i) => i !== at),
        tfs: posting.tfs.filter((_, i) => i !== at),
      });
  }
  for (const [term, count] of tf) {
    const posting = postings.get(term) ?? { docs: [], tfs: [] };
    const at = lowerBound(posting.docs, position);
    const docs = [...posting.docs];
    const tfs = [...posting.tfs];
    if (docs[at] === position) tfs[at] = count;
    else {
      docs.splice(at, 0, position);
      tfs.splice(at, 0, count);
    }
    next.set(term, { docs, tfs });
  }
  return next;
}

function indexOf(
  ids: readonly string[],
  postings: Map<string, Posting>,
  lengths: Float64Array,
  params: Bm25Params,
): LexicalIndex {
  const n = ids.length;
  let total = 0;
  for (const length of lengths) total += length;
  const avgLength = n > 0 && total > 0 ? total / n : 1;

  const scorePositions = (query: string): Map<number, number> => {
    const scores = new Map<number, number>();
    for (const term of new Set(tokenize(query))) {
      const posting = postings.get(term);
      if (posting === undefined) continue;
      const idf = Math.log(1 + (n - posting.docs.length + 0.5) / (posting.docs.length + 0.5));
      for (let i = 0; i < posting.docs.length; i++) {
        const doc = posting.docs[i] ?? 0;
        const tf = posting.tfs[i] ?? 0;
        const norm = params.k1 * (1 - params.b + (params.b * (lengths[doc] ?? 0)) / avgLength);
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (params.k1 + 1)) / (tf + norm));
      }
    }
    return scores;
  };

  let entries = 0;
  for (const posting of postings.values()) entries += posting.docs.length;

  return {
    size: n,
    ids,
    terms: postings.size,
    postings: entries,
    scorePositions,
    score(query) {
      const byId = new Map<string, number>();
      for (const [position, score] of scorePositions(query)) byId.set(ids[position] ?? '', score);
      return byId;
    },
    top(query, count) {
      const hits: LexicalHit[] = [];
      for (const [position, score] of scorePositions(query)) hits.push({ id: ids[position] ?? '', score });
      hits.sort((a, b) => b.score - a.score || compareIds(a.id, b.id));
      return hits.slice(0, Math.max(0, count));
    },
    withText(position, text) {
      if (!Number.isInteger(position) || position < 0 || position >= n)
        throw new RangeError(`no document at position ${position} of ${n}`);
      const { tf, length } = termCounts(text);
      const nextLengths = lengths.slice();
      nextLengths[position] = length;
      return indexOf(ids, replacedPostings(postings, position, tf), nextLengths, params);
    },
  };
}

/** Code-unit order, the same in every runtime (localeCompare is not). */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
