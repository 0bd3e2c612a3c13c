/**
 * The bench's outputs: the results object, the table printed and put in the README, and the SVG
 * chart drawn from the results (hand-written SVG, no dependency).
 */
import type { GatewayFigures } from './gateway.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import type { LoadFigures } from './load.ts';
import type { MemoryFigures } from './memory.ts';

/** One load-tested endpoint; ratios are to `/healthz` of the same run. */
export interface EndpointResult extends LoadFigures {
  name: string;
  tools: number | null;
  rps_ratio: number;
  p50_ratio: number;
  p99_ratio: number;
  /** CPU time per request (µs) of the Worker's processes (workerd, its dev proxy, wrangler) and of the load generator. */
  worker_cpu_us: number;
  generator_cpu_us: number;
  /** (CPU per /healthz request) ÷ (CPU per request): the throughput ratio on an otherwise idle machine. */
  cpu_ratio: number;
}

export interface ReviewResult {
  calls: number;
  ms: number;
}

export interface Target {
  what: string;
  value: number;
  limit: string;
  met: boolean;
}

/** bench/results.json. */
export interface BenchResults {
  generated_at: string;
  machine: { cpus: number; node: string; platform: string };
  method: { connections: number; seconds_per_run: number; rounds: number; route_requests: number };
  endpoints: EndpointResult[];
  /** Turn rows the grouped writer put in the agent's log during a full-rate `/route` run, and how fast. */
  turn_writes: {
    load_seconds: number;
    routes: number;
    turns: number;
    seconds: number;
    rows_per_s: number;
    route_rps: number;
  };
  ingestion: { calls: number; batch: number; in_flight: number; seconds: number; calls_per_s: number };
  review: { missing: string | null; runs: ReviewResult[]; ratio: number | null };
  memory: MemoryFigures[];
  /** An upstream tool called directly and through the agent's MCP endpoint (scripts/bench/gateway.ts). */
  gateway?: GatewayFigures;
  targets: Target[];
}

const fixed = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : '—');
const mib = (bytes: number): string => (bytes / 1048576).toFixed(1);
const thousands = (n: number): string => Math.round(n).toLocaleString('en-US');

/** The Markdown tables (also printed to the terminal). */
export function markdownTables(r: BenchResults): string {
  const lines = [
    `| endpoint | tools | requests/s | × /healthz | p50 ms | × | p99 ms | × | CPU µs/request | /healthz CPU ÷ this |`,
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...r.endpoints.map(
      (e) =>
        `| \`${e.name}\` | ${e.tools === null ? '—' : thousands(e.tools)} | ${thousands(e.rps)} | ${fixed(e.rps_ratio)} | ${fixed(e.p50, 2)} | ${fixed(e.p50_ratio)} | ${fixed(e.p99, 2)} | ${fixed(e.p99_ratio)} | ${thousands(e.worker_cpu_us + e.generator_cpu_us)} | ${fixed(e.cpu_ratio)} |`,
    ),
    '',
    `| measure | figure |`,
    `|---|---|`,
    `| turn rows written by \`/route\` (200 tools, full rate, ${r.turn_writes.load_seconds} s) | ${thousands(r.turn_writes.rows_per_s)} rows/s: ${thousands(r.turn_writes.turns)} turns in the agent's log ${fixed(r.turn_writes.seconds, 1)} s after the first route (${thousands(r.turn_writes.routes)} routes answered within the ${r.turn_writes.load_seconds} s, at ${thousands(r.turn_writes.route_rps)}/s, the rest in flight at its end) |`,
    `| \`/calls\` ingestion | ${thousands(r.ingestion.calls_per_s)} calls/s (${thousands(r.ingestion.calls)} calls in batches of ${thousands(r.ingestion.batch)}, ${r.ingestion.in_flight} in flight) |`,
    ...(r.review.missing !== null
      ? [`| review | not measured: ${r.review.missing} |`]
      : [
          ...r.review.runs.map(
            (run) => `| review over ${thousands(run.calls)} logged calls | ${fixed(run.ms, 1)} ms |`,
          ),
          `| review time ratio (largest / smallest log) | ${fixed(r.review.ratio ?? Number.NaN)} |`,
        ]),
    ...r.memory.map(
      (m) =>
        `| routing snapshot, ${thousands(m.tools)} tools | ${mib(m.snapshot_bytes)} MiB (vector matrix ${mib(m.matrix_bytes)} MiB) |`,
    ),
    ...(r.gateway
      ? [
          `| MCP tool call direct, p50 / p99 | ${fixed(r.gateway.direct.p50_ms, 1)} / ${fixed(r.gateway.direct.p99_ms, 1)} ms |`,
          `| the same call through the gateway, p50 / p99 | ${fixed(r.gateway.gateway.p50_ms, 1)} / ${fixed(r.gateway.gateway.p99_ms, 1)} ms |`,
        ]
      : []),
    '',
    `| target | measured | limit | met |`,
    `|---|---:|---|---|`,
    ...r.targets.map((t) => `| ${t.what} | ${fixed(t.value)} | ${t.limit} | ${t.met ? 'yes' : '**no**'} |`),
  ];
  return lines.join('\n');
}

const COLORS = { healthz: '#8c8c8c', route: '#2f6fdf', p50: '#2f6fdf', p99: '#e07b24', memory: '#3a9a5b' };

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

interface Bar {
  label: string;
  values: { value: number; color: string; text: string }[];
}

/** One panel of grouped vertical bars with a title, scaled to its own maximum. */
function panel(x0: number, title: string, unit: string, bars: Bar[]): string {
  const width = 280;
  const top = 40;
  const height = 200;
  const max = Math.max(1e-9, ...bars.flatMap((b) => b.values.map((v) => v.value)));
  const slot = width / bars.length;
  const parts = [
    `<text x="${x0 + width / 2}" y="20" text-anchor="middle" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="${x0 + width / 2}" y="34" text-anchor="middle" fill="#666" font-size="11">${escapeXml(unit)}</text>`,
    `<line x1="${x0}" y1="${top + height}" x2="${x0 + width}" y2="${top + height}" stroke="#999"/>`,
  ];
  bars.forEach((bar, i) => {
    const barWidth = (slot - 16) / bar.values.length;
    bar.values.forEach((v, j) => {
      const h = Math.max(1, (v.value / max) * (height - 14));
      const x = x0 + i * slot + 8 + j * barWidth;
      const y = top + height - h;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${v.color}"/>`,
      );
      parts.push(
        `<text x="${(x + (barWidth - 2) / 2).toFixed(1)}" y="${(y - 3).toFixed(1)}" text-anchor="middle" font-size="10">${escapeXml(v.text)}</text>`,
      );
    });
    parts.push(
      `<text x="${(x0 + i * slot + slot / 2).toFixed(1)}" y="${top + height + 16}" text-anchor="middle" font-size="11">${escapeXml(bar.label)}</text>`,
    );
  });
  return parts.join('\n  ');
}

/** bench/chart.svg: throughput, latency and snapshot memory side by side. */
export function chartSvg(r: BenchResults): string {
  const label = (e: EndpointResult): string =>
    e.tools === null ? e.name : `route ${e.tools >= 1000 ? `${e.tools / 1000}k` : e.tools}`;
  const throughput = r.endpoints.map((e) => ({
    label: label(e),
    values: [{ value: e.rps, color: e.tools === null ? COLORS.healthz : COLORS.route, text: thousands(e.rps) }],
  }));
  const latency = r.endpoints.map((e) => ({
    label: label(e),
    values: [
      { value: e.p50, color: COLORS.p50, text: fixed(e.p50, 1) },
      { value: e.p99, color: COLORS.p99, text: fixed(e.p99, 1) },
    ],
  }));
  const memory = r.memory.map((m) => ({
    label: `${thousands(m.tools)} tools`,
    values: [{ value: m.snapshot_bytes, color: COLORS.memory, text: `${mib(m.snapshot_bytes)}` }],
  }));
  const legend = `<text x="330" y="292" font-size="11"><tspan fill="${COLORS.p50}">■ p50</tspan>  <tspan fill="${COLORS.p99}">■ p99</tspan></text>`;
  const caption = `${r.method.connections} connections, ${r.method.rounds}×${r.method.seconds_per_run}s per endpoint, ${r.machine.cpus} cores, ${r.generated_at.slice(0, 10)}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="960" height="320" viewBox="0 0 960 320" font-family="sans-serif" font-size="12">`,
    `  <rect width="960" height="320" fill="#fff"/>`,
    `  ${panel(20, 'Throughput', 'requests/s (higher is better)', throughput)}`,
    `  ${panel(340, 'Latency', 'ms (lower is better)', latency)}`,
    `  ${panel(660, 'Routing snapshot memory', 'MiB per agent per isolate', memory)}`,
    `  ${legend}`,
    `  <text x="20" y="312" fill="#666" font-size="10">${escapeXml(caption)}</text>`,
    `</svg>`,
    '',
  ].join('\n');
}

const BEGIN = '<!-- bench:begin -->';
const END = '<!-- bench:end -->';

/**
 * Replaces the README's bench block (between the markers, inside "Performance") with the new
 * tables. Only that block is touched; without the markers the README is left alone.
 */
export function updateReadme(path: string, r: BenchResults): boolean {
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return false;
  const block = `${BEGIN}\nMeasured ${r.generated_at.slice(0, 10)} (${r.machine.cpus} cores, Node ${r.machine.node}, load generator on the same machine):\n\n${markdownTables(r)}\n`;
  writeFileSync(path, text.slice(0, start) + block + text.slice(end));
  return true;
}
