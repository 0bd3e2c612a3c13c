/**
 * The layout rules (`npm run check:layers`, part of `npm run check`). It fails, one line for each
 * breach, on:
 * - a breach of the import rules of `.dependency-cruiser.cjs`, which dependency-cruiser checks on
 *   every import of `src/` and `scripts/`, type-only and dynamic ones too: an import circle; a file
 *   nothing imports that is not an entry point; an import that names no file; `src/core/` importing
 *   anything but `src/core/`, `src/schemas.ts`, `src/errors.ts` and packages, or a Workers module
 *   (`cloudflare:*`, `@cloudflare/*`) or a Node built-in; `src/api/` importing `src/adapters/`;
 *   `src/services/` importing `src/api/`, or `src/adapters/` but for the exceptions that file
 *   lists with why; `src/adapters/` importing `src/services/` or `src/api/`;
 * - an exception of that list no import uses any more;
 * - SQL in `src/` outside `src/adapters/`: a `.prepare(` call (D1's, or an agent log's), an `exec`
 *   on something named `sql` (a Durable Object's `ctx.storage.sql`), or a string or template literal
 *   that reads as a statement (`SELECT … FROM`, `INSERT INTO`, `UPDATE … SET`, `DELETE FROM`,
 *   `CREATE TABLE`/`INDEX`/`TRIGGER`/`VIEW`, `DROP …`, `PRAGMA`, in capitals as SQL is written here).
 *   Comments are not read, so prose about SQL is free; so are the words in lower case ("select
 *   the tools", "delete from the list") and a route named in capitals (`DELETE /v1/agents/:agent`).
 *   Files built from others (`*.gen.ts`) are not read: their sources are;
 * - two files of one name (up to its first dot) in two of `src/core/`, `src/services/`,
 *   `src/adapters/` and `src/` itself: a name says the file's job in its layer (`core/quality-math.ts`,
 *   `services/quality-report.ts`), so an import tells which room it reaches. `src/api/` files are
 *   named for the URL resource they serve and the dashboard's for their tab, so they are not counted;
 * - a path that points nowhere: a `src/…`, `test/…`, `scripts/…` or `docs/…` path named in a comment
 *   of `src/`, `test/` or `scripts/`, or anywhere in `docs/*.md` and `README.md`, that is no file or
 *   folder of the tree (a glob such as `scripts/eval*.ts` is not a path); and a section sign that
 *   follows no RFC's number (no document here numbers its sections).
 *
 * `tsx scripts/check-layers.ts [ROOT]` checks the tree at ROOT (default: this repository) with this
 * repository's `.dependency-cruiser.cjs`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const HERE = fileURLToPath(new URL('..', import.meta.url));
const CONFIG = join(HERE, '.dependency-cruiser.cjs');
const DEPCRUISE = join(HERE, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const SOURCE = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/;
const SCANNED = ['src', 'scripts'];
/** Folders whose files may not share a name with each other's (`src/` itself: its own files only). */
const NAMED_BY_JOB = ['src/core', 'src/services', 'src/adapters', 'src'];
/** Where a path named in a comment or a page is looked for. */
const PATH_CHECKED = ['src', 'test', 'scripts'];
/** A path of this tree in prose: not inside a longer path or a URL, no glob, no template. */
const NAMED_PATH = /(?<![\w./@-])(?:src|test|scripts|docs)\/[\w./-]*\w(?![\w*{$/-])/g;
const SECTION_SIGN = /(?<!RFC \d+ )§/g;

/** Where SQL may be written: the adapters, behind the ports of src/core/ports.ts. */
const SQL_HOME = 'src/adapters/';
/** A literal that reads as an SQL statement (keywords in capitals, as every statement here is written). */
const SQL_TEXT =
  /\b(SELECT\s[\s\S]*?\bFROM\s+[\w"(]|SELECT\s+[\w*]+\s*\(|INSERT\s+(OR\s+[A-Z]+\s+)?INTO\s+[\w"]|UPDATE\s+[\w"]+\s+SET\s|DELETE\s+FROM\s+[\w"]|(CREATE|DROP|ALTER)\s+(TEMP\s+|TEMPORARY\s+|UNIQUE\s+|VIRTUAL\s+)?(TABLE|INDEX|TRIGGER|VIEW)\b|PRAGMA\s+\w)/;

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

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  /** For a circle: the files from `to` back to `from`. */
  cycle?: { name: string }[];
}
interface CruiseResult {
  modules: { source: string; dependencies: { resolved: string; module: string }[] }[];
  summary: { violations: Violation[] };
}
interface Rule {
  name: string;
  comment?: string;
  from: { path?: string | string[] };
  to: { pathNot?: string | string[] };
}

/** The import rules of `.dependency-cruiser.cjs` on the tree at `root`: one line per breach. */
function importBreaches(root: string): string[] {
  const folders = SCANNED.filter((f) => existsSync(join(root, f)));
  if (folders.length === 0) return [];
  const json = execFileSync(
    process.execPath,
    [DEPCRUISE, ...folders, '--config', CONFIG, '--output-type', 'json', '--no-cache'],
    { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  const result = JSON.parse(json) as CruiseResult;
  const rules = (createRequire(import.meta.url)(CONFIG) as { forbidden: Rule[] }).forbidden;
  const why = new Map(rules.map((r) => [r.name, r.comment ?? '']));
  const out = result.summary.violations.map((v) => {
    // A circle is named by every file on it: from imports to, which imports the next, back to from.
    const steps = v.from === v.to ? v.from : [v.from, ...(v.cycle?.map((c) => c.name) ?? [v.to])].join(' imports ');
    return `${steps}: ${v.rule.name} (${why.get(v.rule.name) ?? ''})`;
  });
  // An exception no import uses any more is taken out of the list, so the rule stays as tight as the code.
  const imports = new Set(result.modules.flatMap((m) => m.dependencies.map((d) => `${m.source} ${d.resolved}`)));
  const unanchor = (re: string): string => re.replace(/^\^|\$$/g, '').replace(/\\\./g, '.');
  for (const rule of rules) {
    const from = typeof rule.from.path === 'string' ? unanchor(rule.from.path) : null;
    if (rule.name !== 'services-through-ports' || from === null || !existsSync(join(root, from))) continue;
    for (const to of [rule.to.pathNot ?? []].flat().map(unanchor)) {
      if (!imports.has(`${from} ${to}`))
        out.push(`${from}: its exception for ${to} in .dependency-cruiser.cjs is no longer used: remove it`);
    }
  }
  return out;
}

/** Two files of one name in two of the folders named by job. */
function sharedNames(root: string): string[] {
  const homes = new Map<string, string[]>();
  for (const folder of NAMED_BY_JOB) {
    if (!existsSync(join(root, folder))) continue;
    for (const name of readdirSync(join(root, folder)).sort()) {
      if (!SOURCE.test(name) || /\.d\.[cm]?ts$/.test(name) || !statSync(join(root, folder, name)).isFile()) continue;
      const base = name.slice(0, name.indexOf('.'));
      const list = homes.get(base) ?? [];
      if (!list.includes(folder)) list.push(folder);
      homes.set(base, list);
    }
  }
  return [...homes]
    .filter(([, folders]) => folders.length > 1)
    .map(
      ([base, folders]) =>
        `'${base}' names a file in ${folders.map((f) => `${f}/`).join(' and ')}: name each for its job in its layer`,
    );
}

/** The comments of a source file, each with the line it starts on. */
function commentsOf(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const lineAt = (pos: number): number => text.slice(0, pos).split('\n').length;
  const source = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, false);
  const seen = new Set<number>();
  const visit = (node: ts.Node): void => {
    for (const ranges of [ts.getLeadingCommentRanges(text, node.pos), ts.getTrailingCommentRanges(text, node.end)]) {
      for (const r of ranges ?? []) {
        if (seen.has(r.pos)) continue;
        seen.add(r.pos);
        out.push({ line: lineAt(r.pos), text: text.slice(r.pos, r.end) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Paths in comments and pages that name no file or folder of the tree, and sections that do not exist. */
function pathsNowhere(root: string): string[] {
  const places: { file: string; line: number; text: string }[] = [];
  const walk = (dir: string, visit: (file: string) => void): void => {
    if (!existsSync(join(root, dir))) return;
    for (const name of readdirSync(join(root, dir)).sort()) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const path = `${dir}/${name}`;
      if (statSync(join(root, path)).isDirectory()) walk(path, visit);
      else visit(path);
    }
  };
  for (const top of PATH_CHECKED) {
    walk(top, (file) => {
      if (!SOURCE.test(file) || /\.gen\.[cm]?[jt]sx?$/.test(file)) return;
      for (const c of commentsOf(readFileSync(join(root, file), 'utf8'))) places.push({ file, ...c });
    });
  }
  const pages = [
    'README.md',
    ...(existsSync(join(root, 'docs')) ? readdirSync(join(root, 'docs')) : [])
      .filter((n) => n.endsWith('.md'))
      .map((n) => `docs/${n}`),
  ].filter((f) => existsSync(join(root, f)));
  for (const file of pages) places.push({ file, line: 1, text: readFileSync(join(root, file), 'utf8') });
  const out: string[] = [];
  for (const { file, line, text } of places) {
    const lineOf = (index: number): number => line + text.slice(0, index).split('\n').length - 1;
    for (const m of text.matchAll(NAMED_PATH)) {
      const path = m[0].replace(/\.$/, '');
      if (!existsSync(join(root, path)))
        out.push(`${file}:${lineOf(m.index)}: names ${path}, which does not exist: point it at what it means`);
    }
    for (const m of text.matchAll(SECTION_SIGN)) {
      out.push(`${file}:${lineOf(m.index)}: a § section, but no document here numbers its sections: name the heading`);
    }
  }
  return out;
}

/** Every breach in the tree at `root`, one line each; none when the layout holds. */
function checkLayers(root: string): string[] {
  return [...importBreaches(root), ...sqlOutsideAdapters(root), ...sharedNames(root), ...pathsNowhere(root)];
}

const root = resolve(process.argv[2] ?? HERE);
const breaches = checkLayers(root);
if (breaches.length > 0) {
  process.stderr.write(`${breaches.join('\n')}\n${breaches.length} layout breach(es) in ${root}\n`);
  process.exitCode = 1;
} else {
  process.stdout.write(
    'layers: no import circle, no layer breach, no orphan, no SQL outside src/adapters/, no shared name, no path to nowhere\n',
  );
}
