/**
 * The offline hash embedder (docs/configuration.md): feature hashing of word unigrams, word bigrams and character
 * n-grams into a fixed dimension, signed, sublinear tf, L2-normalised.
 *
 * Why these features: unigrams carry topic, bigrams carry phrases ("air quality"), and character
 * n-grams of each word with boundary marks catch morphology and spelling variants that the light
 * stemmer misses ("forecast"/"forecasting", "crypto"/"cryptocurrency"). The signed hash makes
 * collisions cancel in expectation instead of piling up.
 */
import type { Embedder } from '../core/ports.ts';
import { isStopword, normalize, stem } from '../core/text.ts';

/** How much each feature family weighs; chosen on the ToolE training split (see scripts/eval.ts). */
export interface HashFeatureConfig {
  unigram: number;
  bigram: number;
  char: number;
  minGram: number;
  maxGram: number;
}

/**
 * Default weights, chosen on the ToolE training split only (`npm run eval -- --cold --train`), hash
 * alone at 512 dims, R@5: character 3-5-grams at 0.25 give 56.8%, none 54.6%, 0.5 54.8% (at 512
 * dims every extra feature also adds collision noise); bigrams cost a few tenths (0: 57.0%, 0.3:
 * 56.3%) and nothing in the fused ranking, so they stay light, to order phrases in long example texts.
 */
export const DEFAULT_FEATURES: HashFeatureConfig = { unigram: 1, bigram: 0.15, char: 0.25, minGram: 3, maxGram: 5 };

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Seeds that keep the families apart: the word "ai" and the n-gram "ai" are different features. */
const SEED_UNIGRAM = 0x9e3779b1;
const SEED_BIGRAM = 0x85ebca77;
const SEED_CHAR = 0xc2b2ae3d;
/** The boundary marks of a word for character n-grams ("<cat>"). */
const BEGIN = 0x3c;
const END = 0x3e;

/** murmur3's fmix32: FNV-1a's low bits are poorly mixed, and the bucket comes from the low bits. */
function fmix32(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** FNV-1a over `s[from, to)` continuing from `h`, without allocating a substring. */
function fnvRange(h: number, s: string, from: number, to: number): number {
  let x = h;
  for (let i = from; i < to; i++) {
    x ^= s.charCodeAt(i);
    x = Math.imul(x, FNV_PRIME);
  }
  return x;
}

function fnvString(seed: number, s: string): number {
  return fnvRange((FNV_OFFSET ^ seed) >>> 0, s, 0, s.length);
}

/**
 * Occurrence counts of hashed features: an open-addressing table (linear probing) rather than a
 * Map, because embedding runs on every /route and a Map allocates per feature. Slots are kept in
 * insertion order so the float sums, hence the vector, depend on the text alone.
 */
class FeatureTable {
  #keys = new Uint32Array(1024);
  #counts = new Float64Array(1024);
  #weights = new Float64Array(1024);
  #occupied = new Uint8Array(1024);
  #slots: number[] = [];

  /** Counts one occurrence of `key`, a feature of the family weighing `weight`. */
  add(key: number, weight: number): void {
    if ((this.#slots.length + 1) * 2 > this.#keys.length) this.#grow();
    const mask = this.#keys.length - 1;
    let slot = key & mask;
    while (this.#occupied[slot] === 1) {
      if (this.#keys[slot] === key) {
        this.#counts[slot] = (this.#counts[slot] ?? 0) + 1;
        return;
      }
      slot = (slot + 1) & mask;
    }
    this.#insert(slot, key, 1, weight);
  }

  /** Adds every feature into `vector` (bucket `key mod dims`, sign from the top bit, w·(1 + ln tf)), then empties. */
  drainInto(vector: Float32Array): void {
    const dimensions = vector.length;
    for (const slot of this.#slots) {
      const key = this.#keys[slot] ?? 0;
      const value = (this.#weights[slot] ?? 0) * (1 + Math.log(this.#counts[slot] ?? 1));
      const bucket = key % dimensions;
      vector[bucket] = (vector[bucket] ?? 0) + (key & 0x80000000 ? -value : value);
    }
    this.clear();
  }

  clear(): void {
    for (const slot of this.#slots) this.#occupied[slot] = 0;
    this.#slots = [];
  }

  #insert(slot: number, key: number, count: number, weight: number): void {
    this.#occupied[slot] = 1;
    this.#keys[slot] = key;
    this.#counts[slot] = count;
    this.#weights[slot] = weight;
    this.#slots.push(slot);
  }

  /** Doubles the table (kept at most half full so probes stay short) and re-inserts in order. */
  #grow(): void {
    const old = { keys: this.#keys, counts: this.#counts, weights: this.#weights, slots: this.#slots };
    const size = this.#keys.length * 2;
    this.#keys = new Uint32Array(size);
    this.#counts = new Float64Array(size);
    this.#weights = new Float64Array(size);
    this.#occupied = new Uint8Array(size);
    this.#slots = [];
    for (const from of old.slots) {
      const key = old.keys[from] ?? 0;
      let slot = key & (size - 1);
      while (this.#occupied[slot] === 1) slot = (slot + 1) & (size - 1);
      this.#insert(slot, key, old.counts[from] ?? 1, old.weights[from] ?? 0);
    }
  }
}

/** One scratch table for every call: an isolate runs one synchronous embed at a time. */
const scratch = new FeatureTable();

/** Character n-grams of `<word>`, hashed straight off the padded string. */
function addCharGrams(table: FeatureTable, word: string, cfg: HashFeatureConfig): void {
  const padded = String.fromCharCode(BEGIN) + word + String.fromCharCode(END);
  for (let n = cfg.minGram; n <= cfg.maxGram; n++) {
    const seed = (FNV_OFFSET ^ SEED_CHAR ^ n) >>> 0;
    for (let i = 0; i + n <= padded.length; i++) table.add(fmix32(fnvRange(seed, padded, i, i + n)), cfg.char);
  }
}

/**
 * Counts the hashed features of a text. Stopwords are dropped from words and bigrams: every text
 * has them, so they would only add the same noise to every vector. Character n-grams are taken from
 * the unstemmed word, so they still see the suffix the stemmer cut.
 */
function countFeatures(table: FeatureTable, text: string, cfg: HashFeatureConfig): void {
  let previous: string | null = null;
  for (const word of normalize(text).split(' ')) {
    if (word === '' || isStopword(word)) continue;
    const stemmed = stem(word);
    if (cfg.unigram !== 0) table.add(fmix32(fnvString(SEED_UNIGRAM, stemmed)), cfg.unigram);
    if (previous !== null && cfg.bigram !== 0)
      table.add(fmix32(fnvString(SEED_BIGRAM, `${previous} ${stemmed}`)), cfg.bigram);
    if (cfg.char !== 0) addCharGrams(table, word, cfg);
    previous = stemmed;
  }
}

/**
 * Embeds one text into an L2-normalised vector. Sublinear tf keeps a repeated word from drowning
 * the rest. An empty or all-stopword text gives the zero vector: it is near nothing, which is true.
 */
export function hashEmbed(text: string, dimensions: number, cfg: HashFeatureConfig = DEFAULT_FEATURES): Float32Array {
  const vector = new Float32Array(dimensions);
  scratch.clear();
  countFeatures(scratch, text, cfg);
  scratch.drainInto(vector);
  let norm = 0;
  for (const x of vector) norm += x * x;
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < dimensions; i++) vector[i] = (vector[i] ?? 0) * scale;
  }
  return vector;
}

/**
 * The built-in offline embedder (docs/configuration.md `EMBEDDER=hash`). Cost: CPU only, ≈ 40-70 µs for a
 * 120-character request on the shared 2-core dev box; no I/O, so `embed` resolves at once.
 * Deterministic: the same text gives the same vector in every isolate and every version with this id.
 */
export function createHashEmbedder(opts?: { dimensions?: number }): Embedder {
  // 512 = the Vectorize index of wrangler.toml. On the training split more dimensions help hash
  // alone (R@5 1024: 60.4%, 2048: 62.0%) but not the fused ranking /route uses (63.7% → 63.9%).
  const dimensions = opts?.dimensions ?? 512;
  if (!Number.isInteger(dimensions) || dimensions < 8) {
    throw new RangeError(`hash embedder dimensions must be an integer ≥ 8, got ${dimensions}`);
  }
  return {
    id: `hash-v1-${dimensions}`,
    dimensions,
    embed(texts: readonly string[]): Promise<Float32Array[]> {
      return Promise.resolve(texts.map((t) => hashEmbed(t, dimensions)));
    },
  };
}
