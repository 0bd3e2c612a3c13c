/**
 * scripts/check-layers.ts, as `npm run check` runs it: it passes on this repository, and fails, naming
 * the file and the import, on a small tree with an import circle or with a layer breach, and naming
 * the file and the line on SQL outside src/adapters/.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

/** A tree of source files (path → text) in a fresh temporary folder. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'whetstone-layers-'));
  trees.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** A tree that keeps every rule: each layer imports only downward. */
const sound: Record<string, string> = {
  'src/core/ports.ts': 'export interface Store { get(id: string): Promise<string | null> }\n',
  'src/core/rule.ts': "import { z } from 'zod';\nimport type { Thing } from '../schemas.ts';\nexport const n = 1;\n",
  'src/schemas.ts': 'export type Thing = string;\n',
  'src/adapters/d1.ts':
    "import type { Store } from '../core/ports.ts';\nexport const s: Store | null = null;\n" +
    "export const q = (db: D1Database) => db.prepare('SELECT id FROM tools WHERE agent = ?');\n" +
    'export const t = (sql: SqlStorage) => sql.exec(`CREATE TABLE IF NOT EXISTS x (id TEXT)`);\n',
  // Words that name SQL without being SQL: prose, lower case, a route, a comment.
  'src/api/docs.ts':
    "// SELECT tool FROM tools runs in the adapter.\nexport const d = 'DELETE /v1/agents/:agent removes every row';\n" +
    "export const e = 'select the tools, delete from the list, update the docs';\nexport const f = /x/.exec('x');\n",
  'src/services/svc.ts': "import { s } from '../adapters/d1.ts';\nimport { n } from '../core/rule.ts';\n",
  'src/api/route.ts': "import '../services/svc.ts';\n",
  'scripts/a.ts': "import { n } from '../src/core/rule.ts';\nimport { b } from './b.ts';\n",
  'scripts/b.ts': 'export const b = 2;\n',
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

  it('fails on an import circle, naming each import that closes it, type-only ones too', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'scripts/b.ts': "import type { C } from './c.ts';\nexport const b = 2;\n",
        'scripts/c.ts': "import { b } from './b.ts';\nexport type C = typeof b;\n",
      }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "import circle (2 files reach each other): scripts/b.ts imports './c.ts', scripts/c.ts imports './b.ts', back to scripts/b.ts",
    );
    expect(run.stderr).toContain('1 layout breach(es)');
  });

  it('fails on the core importing an adapter or a Workers module, naming the file and the import', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'src/core/rule.ts':
          "import { s } from '../adapters/d1.ts';\nimport { DurableObject } from 'cloudflare:workers';\n",
      }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "src/core/rule.ts: import '../adapters/d1.ts' (src/adapters/d1.ts): src/core/ imports only src/core/, src/schemas.ts and src/errors.ts",
    );
    expect(run.stderr).toContain(
      "src/core/rule.ts: import 'cloudflare:workers' (a package): src/core/ imports no Workers module",
    );
    expect(run.stderr).toContain('2 layout breach(es)');
  });

  it('fails on an adapter importing a service and a service importing a route', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'src/adapters/d1.ts': "import '../services/other.ts';\nexport const s = null;\n",
        'src/services/other.ts': "import '../api/route.ts';\n",
        'src/api/route.ts': 'export {};\n',
      }),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "src/adapters/d1.ts: import '../services/other.ts' (src/services/other.ts): src/adapters/ never imports src/services/",
    );
    expect(run.stderr).toContain(
      "src/services/other.ts: import '../api/route.ts' (src/api/route.ts): src/services/ never imports src/api/",
    );
  });

  it('fails on SQL outside src/adapters/: a prepare() call, an exec on sql, and statements in literals', async () => {
    const run = await checkLayers(
      tree({
        ...sound,
        'src/services/svc.ts':
          "import { s } from '../adapters/d1.ts';\n" +
          "export const a = (db: D1Database) => db.prepare('SELECT 1');\n" +
          'export const b = (ctx: DurableObjectState) => ctx.storage.sql.exec(`\n  UPDATE offers SET offered = 0`);\n',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the fixture's own source holds a template literal
        'src/agent-object.ts': 'const k = `INSERT OR REPLACE INTO rate (principal) VALUES (${1})`;\n',
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
      "src/agent-object.ts:1: an SQL statement in a literal ('INSERT OR REPLACE INTO rate (principal) ')",
    );
    expect(run.stderr).toContain('4 layout breach(es)');
    expect(run.stderr).not.toContain('src/adapters/d1.ts');
    expect(run.stderr).not.toContain('src/api/docs.ts');
  });
});
