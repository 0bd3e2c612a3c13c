/**
 * Draws docs/layers.svg (`npm run docs:layers`): the rooms of `src/` and the imports between them,
 * as dependency-cruiser reads them with `.dependency-cruiser.cjs` (every import, type-only ones
 * too). Each folder is one box and the files of `src/` itself are grouped by what they do; an arrow
 * means at least one file imports one of the other box, red where a rule
 * forbids it but for the exceptions the config names. The picture changes only when an arrow does. Rendered by Graphviz compiled to WebAssembly (@viz-js/viz): no
 * Graphviz to install. `--check` fails when the checked-in picture is not what the code draws now.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { instance } from '@viz-js/viz';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'docs', 'layers.svg');

/** The boxes: a folder of `src/`, or a group of its own files, with what it holds. */
const BOXES: { id: string; label: string; files: RegExp; fill: string }[] = [
  {
    id: 'entry',
    label: 'Worker entry\nindex, app, cron, agent-object',
    files: /^src\/(index|app|cron|agent-object)\.ts$/,
    fill: '#e8eefc',
  },
  {
    id: 'helpers',
    label: 'edge helpers\nauth, augmentation, keep-alive',
    files: /^src\/(auth|augmentation|keep-alive)\.ts$/,
    fill: '#e8eefc',
  },
  { id: 'env', label: 'env.ts\nbuilds the adapters, fills the ports', files: /^src\/env\.ts$/, fill: '#e8eefc' },
  { id: 'api', label: 'src/api/\nHono routes, one per resource', files: /^src\/api\//, fill: '#fff4d6' },
  { id: 'dashboard', label: 'src/dashboard/\nthe approval page', files: /^src\/dashboard\//, fill: '#fff4d6' },
  { id: 'services', label: 'src/services/\none use case each', files: /^src\/services\//, fill: '#fde3cf' },
  {
    id: 'adapters',
    label: 'src/adapters/\nD1, agent logs, models, MCP client',
    files: /^src\/adapters\//,
    fill: '#f3d9f7',
  },
  { id: 'core', label: 'src/core/\npure rules, ports.ts', files: /^src\/core\//, fill: '#dff3df' },
  {
    id: 'shared',
    label: 'shared\nschemas, errors, logger, version',
    files: /^src\/(schemas|errors|logger|version)\.ts$/,
    fill: '#eeeeee',
  },
  { id: 'client', label: 'src/client/\nTypeScript client', files: /^src\/client\//, fill: '#ffffff' },
  { id: 'cli', label: 'src/cli/\nthe whetstone CLI', files: /^src\/cli\//, fill: '#ffffff' },
];
/** Arrows a rule forbids: drawn red, so a named exception shows. */
const FORBIDDEN = new Set([
  'core>adapters',
  'core>services',
  'core>api',
  'api>adapters',
  'services>adapters',
  'services>api',
  'adapters>services',
  'adapters>api',
]);

interface CruiseResult {
  modules: { source: string; dependencies: { resolved: string }[] }[];
}

const json = execFileSync(
  process.execPath,
  [
    join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs'),
    'src',
    '--config',
    '.dependency-cruiser.cjs',
    '--output-type',
    'json',
    '--include-only',
    '^src/',
    '--no-cache',
  ],
  { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
);
const boxOf = (file: string): string | null => BOXES.find((b) => b.files.test(file))?.id ?? null;
const counts = new Map<string, number>();
for (const m of (JSON.parse(json) as CruiseResult).modules) {
  const from = boxOf(m.source);
  for (const d of m.dependencies) {
    const to = boxOf(d.resolved);
    if (from === null || to === null || from === to) continue;
    counts.set(`${from}>${to}`, (counts.get(`${from}>${to}`) ?? 0) + 1);
  }
}

const quote = (s: string): string => `"${s.replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
const dot = [
  'digraph layers {',
  '  graph [rankdir=TB, fontname="Helvetica", nodesep=0.35, ranksep=0.55, label="Imports between the rooms of src/ (npm run docs:layers); red: a rule forbids it but for the exceptions named in .dependency-cruiser.cjs", labelloc=b, fontsize=10];',
  '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, color="#555555"];',
  '  edge [fontname="Helvetica", fontsize=9, color="#777777", arrowsize=0.7];',
  ...BOXES.map((b) => `  ${b.id} [label=${quote(b.label)}, fillcolor=${quote(b.fill)}];`),
  ...[...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key]) => {
      const [from, to] = key.split('>');
      const red = FORBIDDEN.has(key) ? ', color="#c0392b", fontcolor="#c0392b", penwidth=1.6' : '';
      return `  ${from} -> ${to}${red === '' ? '' : ` [${red.slice(2)}]`};`;
    }),
  '}',
].join('\n');
const svg = (await instance()).renderString(dot, { format: 'svg', engine: 'dot' });

if (process.argv.includes('--check')) {
  if (readFileSync(out, 'utf8') !== svg) {
    process.stderr.write('docs/layers.svg is not what the code draws now: run npm run docs:layers\n');
    process.exitCode = 1;
  }
} else {
  writeFileSync(out, svg);
  process.stdout.write(`wrote ${out} (${svg.length} bytes)\n`);
}
