/**
 * scripts/check-layers.ts, as `npm run check` runs it, with this repository's .dependency-cruiser.cjs:
 * it passes on this repository, and on small trees fails, naming the file and the import, on an
 * import circle, a layer breach, an orphan and an exception no longer used; naming the file and the
 * line on SQL outside src/adapters/ and on a path or a section that points nowhere; and naming the
 * folders of two files that share a name.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const trees: string[] = [];

afterAll(() => {
  for (const t of trees) rmSync(t, { recursive: true, force: true });
});

function checkLayers(tree?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = ['--import', 'tsx', 'scripts/check-layers.ts', ...(tree === undefined ? [] : [tree])];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: root }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A tree of source files (path → text) in a fresh temporary folder, with this repository's packages. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'whetstone-layers-'));
  trees.push(dir);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** A tree that keeps every rule: each layer imports only downward, and every file is reached from an entry. */
const sound: Record<string, string> = {
  'src/index.ts': "import './api/route.ts';\nimport './env.ts';\n",
  'src/env.ts':
    "import type { Store } from './core/ports.ts';\nimport { s } from './adapters/d1.ts';\nexport const e: Store | null = s;\n",
  'src/core/ports.ts': 'export interface Store { get(id: string): Promise<string | null> }\n',
  'src/core/rule.ts': "import { z } from 'zod';\nimport type { Thing } from '../schemas.ts';\nexport const n = 1;\n",
  'src/schemas.ts': 'export type Thing = string;\n',
  'src/adapters/d1.ts':
    "import type { Store } from '../core/ports.ts';\nexport const s: Store | null = null;\n" +
    "export const q = (db: D1Database) => db.prepare('SELECT id FROM tools WHERE agent = ?');\n" +
    'export const t = (sql: SqlStorage) => sql.exec(`CREATE TABLE IF NOT EXISTS x (id TEXT)`);\n',
  // Words that name SQL without being SQL: prose, lower case, a route, a comment.
  'src/api/docs.ts':
    "// SELECT tool FROM tools runs in the adapter (src/adapters/d1.ts, docs/layers.md).\nexport const d = 'DELETE /v1/agents/:agent removes every row';\n" +
    "export const e = 'select the tools, delete from the list, update the docs';\nexport const f = /x/.exec('x');\n",
  'src/services/svc.ts':
    "import type { Store } from '../core/ports.ts';\nimport { n } from '../core/rule.ts';\nexport const v = (s: Store) => s.get(String(n));\n",
  'src/api/route.ts': "import '../services/svc.ts';\nimport './docs.ts';\n",
  'scripts/a.ts': "import { n } from '../src/core/rule.ts';\nimport { b } from './b.ts';\n",
  'scripts/b.ts': 'export const b = 2;\n',
  'docs/layers.md':
    '# Layers\n\nThe rules live in src/core/rule.ts; measured as RFC 9110 §10.2.3 says; see scripts/eval*.ts.\n',
};

describe('the layout check (npm run check:layers)', () => {
  it('passes on this repository', async () => {
    const run = await checkLayers();
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('no import circle, no layer breach');
  });

  it('passes on a small tree that keeps the rules', async () => {
    const run = await checkLayers(tree(sound));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  it('fails on an import circle, naming each file on it, type-only imports too', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'scripts/b.ts': "import type { C } from './c.ts';\nexport const b = 2;\n",
        'scripts/c.ts': "import { b } from './b.ts';\nexport type C = typeof b;\n",
      }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('scripts/b.ts imports scripts/c.ts imports scripts/b.ts: no-circular');
    expect(run.stderr).toContain('1 layout breach(es)');
  });

  it('fails on the core importing an adapter, a Workers module or a Node built-in', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'src/core/rule.ts':
          "import { s } from '../adapters/d1.ts';\nimport { DurableObject } from 'cloudflare:workers';\n" +
          "import { createHash } from 'node:crypto';\nimport type { Thing } from '../schemas.ts';\nexport const n = 1;\n",
      }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'src/core/rule.ts imports src/adapters/d1.ts: core-is-pure (src/core/ imports only src/core/, src/schemas.ts, src/errors.ts and packages',
    );
    expect(run.stderr).toContain('src/core/rule.ts imports cloudflare:workers: core-no-workers');
    expect(run.stderr).toContain('src/core/rule.ts imports crypto: core-is-pure');
  });

  it('fails on a route importing an adapter, a service importing an adapter, and an adapter importing a service', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'src/api/route.ts': "import '../services/svc.ts';\nimport './docs.ts';\nimport '../adapters/d1.ts';\n",
        'src/services/svc.ts': "import { s } from '../adapters/d1.ts';\nexport const v = s;\n",
        'src/adapters/d1.ts':
          "import type { Store } from '../core/ports.ts';\nimport '../services/svc.ts';\nexport const s: Store | null = null;\n",
      }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('src/api/route.ts imports src/adapters/d1.ts: api-not-adapters');
    expect(run.stderr).toContain('src/services/svc.ts imports src/adapters/d1.ts: services-through-ports');
    expect(run.stderr).toContain('src/adapters/d1.ts imports src/services/svc.ts: adapters-below-services');
  });

  it('fails on a file nothing imports, and on an exception to the ports rule no import uses', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'src/core/unused.ts': 'export const u = 1;\n',
        // src/services/gateway.ts may import adapters/mcp-upstream.ts; this one does not, so the exception is stale.
        'src/services/gateway.ts': "import { n } from '../core/rule.ts';\nexport const m = n;\n",
        'src/api/route.ts': "import '../services/svc.ts';\nimport '../services/gateway.ts';\nimport './docs.ts';\n",
      }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('src/core/unused.ts: no-orphans');
    expect(run.stderr).toContain(
      'src/services/gateway.ts: its exception for src/adapters/mcp-upstream.ts in .dependency-cruiser.cjs is no longer used',
    );
    expect(run.stderr).toContain('2 layout breach(es)');
  });

  it('fails on SQL outside src/adapters/: a prepare() call, an exec on sql, and statements in literals', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'src/services/svc.ts':
          "import { n } from '../core/rule.ts';\n" +
          "export const a = (db: D1Database) => db.prepare('SELECT 1');\n" +
          'export const b = (ctx: DurableObjectState) => ctx.storage.sql.exec(`\n  UPDATE offers SET offered = 0`);\n',
        'src/env.ts':
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the fixture's own source holds a template literal
          "import './adapters/d1.ts';\nconst k = `INSERT OR REPLACE INTO rate (principal) VALUES (${1})`;\n",
      }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'src/services/svc.ts:2: a prepare() call: SQL lives in src/adapters/ only, behind a port of src/core/ports.ts',
    );
    expect(run.stderr).toContain('src/services/svc.ts:3: ctx.storage.sql.exec()');
    expect(run.stderr).toContain(
      "src/services/svc.ts:3: an SQL statement in a literal ('UPDATE offers SET offered = 0')",
    );
    expect(run.stderr).toContain(
      "src/env.ts:2: an SQL statement in a literal ('INSERT OR REPLACE INTO rate (principal) ')",
    );
    expect(run.stderr).toContain('4 layout breach(es)');
    expect(run.stderr).not.toContain('src/adapters/d1.ts');
    expect(run.stderr).not.toContain('src/api/docs.ts');
  });

  it('fails on two files of one name in two layers, and not on a route named like a core file', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'src/core/quality.ts': 'export const q = 1;\n',
        'src/services/quality.ts': "import { q } from '../core/quality.ts';\nexport const r = q;\n",
        'src/api/rule.ts': "import { n } from '../core/rule.ts';\nexport const a = n;\n",
        'src/api/route.ts':
          "import '../services/svc.ts';\nimport '../services/quality.ts';\nimport './docs.ts';\nimport './rule.ts';\n",
      }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "'quality' names a file in src/core/ and src/services/: name each for its job in its layer",
    );
    expect(run.stderr).toContain('1 layout breach(es)');
  });

  it('fails on a comment or a page naming a path that does not exist, or a numbered section', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'src/core/rule.ts':
          "import type { Thing } from '../schemas.ts';\n/** The rule of src/core/gone.ts, as docs/api.md says. */\nexport const n = 1;\nexport const path = 'src/not/a/comment.ts';\n",
        'README.md': '# Tree\n\nSee docs/missing.md and STYLE §3.\n',
      }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'src/core/rule.ts:2: names src/core/gone.ts, which does not exist: point it at what it means',
    );
    expect(run.stderr).toContain('src/core/rule.ts:2: names docs/api.md, which does not exist');
    expect(run.stderr).toContain('README.md:3: names docs/missing.md, which does not exist');
    expect(run.stderr).toContain('README.md:3: a § section, but no document here numbers its sections');
    expect(run.stderr).toContain('4 layout breach(es)');
  });
});
