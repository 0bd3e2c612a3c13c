/**
 * `npm run measure:vectorize`: does routing with a Vectorize binding rank as the exact index does?
 * On ToolE's held-out half (199 tools registered cold, hash embedder), every request is ranked
 * twice by src/core/routing.ts `rankTools`: by the exact scan, and from the vector matches Vectorize
 * would answer once upserts are visible (the nearest N tools by cosine, N = 50 as `/route` asks for
 * k = 5, and 100, Vectorize's cap) fused with BM25. Prints how often the top 5 are the same, and
 * recall@5 of each.
 */
import { createHashEmbedder } from '../src/adapters/hash-embedder.ts';
import { rankTools, vectorScores } from '../src/core/routing.ts';
import { buildColdIndex } from './eval-common.ts';
import { loadToolE, splitQueries } from './eval-data.ts';

const K = 5;
const { tools, queries } = loadToolE();
const { heldOut } = splitQueries(queries);
const embedder = createHashEmbedder();
const index = await buildColdIndex(tools, embedder);
const vectors = await embedder.embed(heldOut.map((q) => q.text));

console.log(`ToolE held-out: ${heldOut.length.toLocaleString('en-US')} requests, ${tools.length} tools, top ${K}`);
console.log('| vector candidates | same top 5 as exact | same names (any order) | R@5 exact | R@5 with Vectorize |');
console.log('|---:|---:|---:|---:|---:|');
for (const n of [50, 100]) {
  let same = 0;
  let sameSet = 0;
  let hitsExact = 0;
  let hitsBound = 0;
  heldOut.forEach((q, i) => {
    const query = { text: q.text, vector: vectors[i] ?? new Float32Array(embedder.dimensions) };
    const exact = rankTools(index, query, K).map((t) => t.name);
    const cosine = vectorScores(index, query.vector);
    const nearest = index.names
      .map((name, p) => ({ id: name, score: cosine[p] ?? 0 }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, n);
    const bound = rankTools(index, query, K, nearest).map((t) => t.name);
    if (exact.join('\n') === bound.join('\n')) same++;
    if ([...exact].sort().join('\n') === [...bound].sort().join('\n')) sameSet++;
    if (exact.includes(q.tool)) hitsExact++;
    if (bound.includes(q.tool)) hitsBound++;
  });
  const pct = (x: number) => `${((100 * x) / heldOut.length).toFixed(2)}%`;
  console.log(`| ${n} | ${pct(same)} | ${pct(sameSet)} | ${pct(hitsExact)} | ${pct(hitsBound)} |`);
}
