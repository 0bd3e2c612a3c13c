/**
 * `npm run measure:snapshot`: the routing snapshot's memory per toolbox size, with the exact
 * in-process index (vectors in the snapshot) and with a Vectorize binding (no vectors in it),
 * measured as `npm run bench` measures memory (scripts/bench/memory.ts), beside what the
 * isolate's snapshot cache counts it as (`snapshotBytes`, the figure its byte budget is held to).
 * Prints a table.
 */
import { toolbox } from './bench/data.ts';
import { measureSnapshot } from './bench/memory.ts';

const SIZES = [1_000, 10_000, 50_000];
const mib = (b: number): string => `${(b / 1_048_576).toFixed(2)} MiB`;
const ratio = (estimate: number, measured: number): string => `${(estimate / measured).toFixed(2)}×`;

console.log(
  '| tools | exact index: snapshot | of which vectors | counted as | Vectorize bound: snapshot | counted as |',
);
console.log('|---:|---:|---:|---:|---:|---:|');
for (const n of SIZES) {
  const tools = toolbox(n);
  const exact = await measureSnapshot(tools);
  const bound = await measureSnapshot(tools, true);
  console.log(
    `| ${n.toLocaleString('en-US')} | ${mib(exact.snapshot_bytes)} | ${mib(exact.matrix_bytes)} | ${mib(exact.estimated_bytes)} (${ratio(exact.estimated_bytes, exact.snapshot_bytes)}) | ${mib(bound.snapshot_bytes)} | ${mib(bound.estimated_bytes)} (${ratio(bound.estimated_bytes, bound.snapshot_bytes)}) |`,
  );
}
