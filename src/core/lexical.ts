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
}

interface Posting {
  docs: number[];
  tfs: number[];
}

/** Term → postings, plus each document's length in tokens. */
function buildPostings(docs: readonly { text: string }[]): { postings: Map<string, Posting>; lengths: Float64Array } {
  const postings = new Map<string, Posting>();
  const lengths = new Float64Array(docs.length);
  docs.forEach((doc, position) => {
    const tokens = tokenize(doc.text);
    lengths[position] = tokens.length;
    const tf = new Map<string, number>();
    for (const token of tokens) tf.set(token, (tf.get(token) ?? 0) + 1);
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
  const ids = docs.map((d) => d.id);
  const n = docs.length;
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
  };
}

/** Code-unit order, the same in every runtime (localeCompare is not). */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
