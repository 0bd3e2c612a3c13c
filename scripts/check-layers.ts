/**
 * The layout rules, checked on the imports of `src/` and `scripts/` (`npm run check:layers`, part of
 * `npm run check`). Every import counts, type-only and dynamic ones too. It fails, naming the file and
 * the import, on:
 * - an import circle: files that import each other, directly or through others;
 * - `src/core/` importing anything outside `src/core/` but `src/schemas.ts` and `src/errors.ts`, or a
 *   Workers module (`cloudflare:*`, `@cloudflare/*`): the core stays pure and runs anywhere;
 * - `src/adapters/` importing `src/services/` or `src/api/`;
 * - `src/services/` importing `src/api/`;
 * - SQL in `src/` outside `src/adapters/`: a `.prepare(` call (D1's, or an agent log's), an `exec`
 *   on something named `sql` (a Durable Object's `ctx.storage.sql`), or a string or template literal
 *   that reads as a statement (`SELECT … FROM`, `INSERT INTO`, `UPDATE … SET`, `DELETE FROM`,
 *   `CREATE TABLE`/`INDEX`/`TRIGGER`/`VIEW`, `DROP …`, `PRAGMA`, in capitals as SQL is written here).
 *   Comments are not read, so prose about SQL is free; so are the words in lower case ("select
 *   the tools", "delete from the list") and a route named in capitals (`DELETE /v1/agents/:agent`).
 *   Files built from others (`*.gen.ts`) are not read: their sources are.
 *
 * `tsx scripts/check-layers.ts [ROOT]` checks the tree at ROOT (default: this repository).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SOURCE = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/;
const SCANNED = ['src', 'scripts'];
/** Outside `src/core/`, what the core may import: the request schemas and the error type. */
const CORE_MAY_IMPORT = new Set(['src/schemas.ts', 'src/errors.ts']);
const WORKERS_MODULE = /^(cloudflare:|@cloudflare\/)/;
/** Layers that must not import the layers listed beside them. */
const FORBIDDEN: readonly { from: string; to: readonly string[] }[] = [
  { from: 'src/adapters/', to: ['src/services/', 'src/api/'] },
  { from: 'src/services/', to: ['src/api/'] },
];

/** Where SQL may be written: the adapters, behind the ports of src/core/ports.ts. */
const SQL_HOME = 'src/adapters/';
/** A literal that reads as an SQL statement (keywords in capitals, as every statement here is written). */
const SQL_TEXT =
  /\b(SELECT\s[\s\S]*?\bFROM\s+[\w"(]|SELECT\s+[\w*]+\s*\(|INSERT\s+(OR\s+[A-Z]+\s+)?INTO\s+[\w"]|UPDATE\s+[\w"]+\s+SET\s|DELETE\s+FROM\s+[\w"]|(CREATE|DROP|ALTER)\s+(TEMP\s+|TEMPORARY\s+|UNIQUE\s+|VIRTUAL\s+)?(TABLE|INDEX|TRIGGER|VIEW)\b|PRAGMA\s+\w)/;

/** One import of one file: what it says, and the file of this tree it names (null: a package). */
interface Import {
  from: string;
  specifier: string;
  to: string | null;
}

/** Every source file under the scanned folders, as paths relative to `root` with `/`. */
function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (SOURCE.test(name)) out.push(relative(root, path).split(sep).join('/'));
    }
  };
  for (const top of SCANNED) if (existsSync(join(root, top))) walk(join(root, top));
  return out;
}

/** The file a relative specifier names, as TypeScript with `allowImportingTsExtensions` would find it. */
function resolveRelative(root: string, from: string, specifier: string): string {
  const base = resolve(root, dirname(from), specifier);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    `${base}.mjs`,
    `${base}.js`,
    join(base, 'index.ts'),
  ];
  const found = candidates.find((c) => existsSync(c) && statSync(c).isFile()) ?? base;
  return relative(root, found).split(sep).join('/');
}

/** The imports of every scanned file: import and export declarations, `import()`, `require()`, `import('…')` types. */
function readImports(root: string): Import[] {
  const out: Import[] = [];
  for (const file of sourceFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      const relativeImport = fileName.startsWith('./') || fileName.startsWith('../');
      out.push({ from: file, specifier: fileName, to: relativeImport ? resolveRelative(root, file, fileName) : null });
    }
  }
  return out;
}

/** Why one import breaks a layer rule, or null. */
function layerBreach(i: Import): string | null {
  if (i.from.startsWith('src/core/')) {
    if (i.to === null && WORKERS_MODULE.test(i.specifier)) return 'src/core/ imports no Workers module';
    if (i.to !== null && !i.to.startsWith('src/core/') && !CORE_MAY_IMPORT.has(i.to))
      return 'src/core/ imports only src/core/, src/schemas.ts and src/errors.ts';
  }
  for (const rule of FORBIDDEN) {
    const to = i.to;
    if (!i.from.startsWith(rule.from) || to === null) continue;
    const layer = rule.to.find((t) => to.startsWith(t));
    if (layer !== undefined) return `${rule.from} never imports ${layer}`;
  }
  return null;
}

/**
 * The import circles: for each group of files that reach each other (a strongly connected
 * component, Tarjan's algorithm), one circle through its first file, as the imports that close it.
 */
function circles(imports: readonly Import[]): { group: string[]; circle: Import[] }[] {
  const edges = new Map<string, Import[]>();
  for (const i of imports) {
    if (i.to === null) continue;
    const list = edges.get(i.from) ?? [];
    list.push(i);
    edges.set(i.from, list);
  }
  const next = (file: string): Import[] => edges.get(file) ?? [];
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file) ?? 0);
    stack.push(file);
    onStack.add(file);
    for (const { to } of next(file)) {
      if (to === null) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    for (let f = stack.pop(); f !== undefined; f = stack.pop()) {
      onStack.delete(f);
      group.push(f);
      if (f === file) break;
    }
    const selfImport = next(file).some((i) => i.to === file);
    if (group.length > 1 || selfImport) groups.push(group.sort());
  };
  for (const file of [...edges.keys()].sort()) if (!index.has(file)) visit(file);
  // One circle per group: the shortest way back to its first file, found breadth-first inside the group.
  return groups.map((group) => {
    const inGroup = new Set(group);
    const start = group[0] ?? '';
    const via = new Map<string, Import>();
    const queue = [start];
    for (let k = 0; k < queue.length; k++) {
      const file = queue[k] ?? '';
      for (const i of next(file)) {
        if (i.to === null || !inGroup.has(i.to)) continue;
        if (i.to === start) {
          const path = [i];
          for (let back = via.get(file); back !== undefined; back = via.get(back.from)) path.unshift(back);
          return { group, circle: path };
        }
        if (!via.has(i.to)) {
          via.set(i.to, i);
          queue.push(i.to);
        }
      }
    }
    return { group, circle: [] };
  });
}

/** The SQL of one file of `src/` outside the adapters: one line each, with its line number. */
function sqlIn(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const at = (node: ts.Node): string =>
    `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const on = node.expression.expression.getText(source);
      if (method === 'prepare') out.push(`${at(node)}: a prepare() call`);
      else if (method === 'exec' && /sql$/i.test(on)) out.push(`${at(node)}: ${on}.exec()`);
    }
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node)) &&
      SQL_TEXT.test(node.text)
    ) {
      out.push(`${at(node)}: an SQL statement in a literal ('${node.text.trim().replace(/\s+/g, ' ').slice(0, 40)}')`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out.map((line) => `${line}: SQL lives in ${SQL_HOME} only, behind a port of src/core/ports.ts`);
}

/** The SQL found in `src/` outside the adapters. */
function sqlOutsideAdapters(root: string): string[] {
  return sourceFiles(root)
    .filter((f) => f.startsWith('src/') && !f.startsWith(SQL_HOME) && !/\.gen\.[cm]?[jt]sx?$/.test(f))
    .flatMap((f) => sqlIn(f, readFileSync(join(root, f), 'utf8')));
}

/** Every breach in the tree at `root`, one line each; none when the layout holds. */
function checkLayers(root: string): string[] {
  const imports = readImports(root);
  const out: string[] = [...sqlOutsideAdapters(root)];
  for (const i of imports) {
    const why = layerBreach(i);
    if (why !== null) out.push(`${i.from}: import '${i.specifier}' (${i.to ?? 'a package'}): ${why}`);
  }
  for (const { group, circle } of circles(imports)) {
    const steps = circle.map((i) => `${i.from} imports '${i.specifier}'`).join(', ');
    out.push(`import circle (${group.length} files reach each other): ${steps}, back to ${circle[0]?.from}`);
  }
  return out;
}

const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
const breaches = checkLayers(resolve(root));
if (breaches.length > 0) {
  process.stderr.write(`${breaches.join('\n')}\n${breaches.length} layout breach(es) in ${root}\n`);
  process.exitCode = 1;
} else {
  process.stdout.write('layers: no import circle, no layer breach, no SQL outside src/adapters/\n');
}
