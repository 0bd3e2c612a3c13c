/**
 * The package as a user installs it (docs/integrations.md "Install the package"): `npm pack` builds
 * dist/ and packs it, an empty project installs the tarball, then plain Node runs the CLI and imports
 * `whetstone/client`, and TypeScript with `module: NodeNext` type-checks against the shipped .d.ts.
 * Nothing here uses tsx or the TypeScript source.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const url = inject('workerUrl');
const token = inject('adminToken');
const work = mkdtempSync(join(tmpdir(), 'whetstone-pack-'));
const app = join(work, 'app');
const shell = process.platform === 'win32';

// npm passes its own settings to scripts as npm_* variables; npm_config_local_prefix (this repo)
// would make the install below land here instead of in the temporary project. Only the settings
// that say where packages come from are kept.
const KEEP = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig', 'npm_config_cafile']);
const env: Record<string, string> = Object.fromEntries(
  Object.entries(process.env).filter(
    (e): e is [string, string] => e[1] !== undefined && (!e[0].toLowerCase().startsWith('npm_') || KEEP.has(e[0])),
  ),
);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, extra: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      // worker-configuration.d.ts (wrangler types) puts the Worker's vars on process.env's type; a child needs none.
      { cwd, env: { ...env, ...extra } as NodeJS.ProcessEnv, shell, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function ok(result: Run, what: string): Run {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

let packed: string[] = [];

beforeAll(async () => {
  const pack = ok(await run('npm', ['pack', '--json', '--pack-destination', work], root), 'npm pack');
  const [entry] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { files: { path: string }[] }[];
  packed = (entry?.files ?? []).map((f) => f.path);
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${work}`);
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }),
  );
  const args = ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, tarball)];
  ok(await run('npm', args, app), 'npm install <tarball>');
}, 300_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('the packed package, installed into an empty project', () => {
  it('ships the build, not the source, and pulls in only what the client types need', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'bin/whetstone.mjs',
        'dist/client/index.js',
        'dist/client/index.d.ts',
        'dist/cli/main.js',
      ]),
    );
    expect(
      packed.filter(
        (p) => p.startsWith('src/') || p.startsWith('test/') || (p.endsWith('.ts') && !p.endsWith('.d.ts')),
      ),
    ).toEqual([]);
    expect(existsSync(join(app, 'node_modules/whetstone/dist/client/index.js'))).toBe(true);
    // The dev tooling stays out of a user's node_modules. The libraries the Worker bundles (openai,
    // the MCP SDK, @cfworker/json-schema) are dependencies so an audit sees them (docs/decisions.md).
    for (const absent of ['tsx', 'typescript', 'wrangler', 'vitest', '@biomejs/biome']) {
      expect(existsSync(join(app, 'node_modules', absent)), absent).toBe(false);
    }
  });

  it('`npx whetstone --help` prints the usage, and the installed CLI talks to the Worker', async () => {
    const help = await run('npx', ['--yes=false', 'whetstone', '--help'], app);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: whetstone <command> \[options\]\n/);
    expect(help.stdout).toContain('tools import <file>');

    const agent = `pack-cli-${Date.now().toString(36)}`;
    const tools = [{ name: 'get_weather', description: 'Current weather for a city.', parameters: { type: 'object' } }];
    writeFileSync(join(app, 'tools.json'), JSON.stringify(tools));
    const credentials = { WHETSTONE_URL: url, WHETSTONE_TOKEN: token, WHETSTONE_AGENT: agent };
    const imported = await run('npx', ['--yes=false', 'whetstone', 'tools', 'import', 'tools.json'], app, credentials);
    expect(imported).toMatchObject({ code: 0, stderr: '' });
    expect(imported.stdout).toMatch(/^1 tool\(s\) registered\n/);
    expect(imported.stdout).toMatch(/^get_weather\s+1\s/m);
  });

  it('a plain .mjs file imports whetstone/client and uses it', async () => {
    const agent = `pack-mjs-${Date.now().toString(36)}`;
    writeFileSync(
      join(app, 'use.mjs'),
      `import { createClient, WhetstoneError, withWhetstone, SEARCH_TOOL_NAME } from 'whetstone/client';
const ws = createClient({ url: process.env.WHETSTONE_URL, token: process.env.WHETSTONE_TOKEN, agent: ${JSON.stringify(agent)} });
const { tools } = await ws.registerTools([{ name: 'send_email', description: 'Send an email.', parameters: { type: 'object' } }]);
console.log('registered', tools.map((t) => t.name).join(','));
try {
  await ws.tool('no_such_tool');
} catch (e) {
  console.log('refused', e instanceof WhetstoneError, e.status, e.code);
}
console.log(typeof withWhetstone, SEARCH_TOOL_NAME);
`,
    );
    const result = await run(process.execPath, ['use.mjs'], app, { WHETSTONE_URL: url, WHETSTONE_TOKEN: token });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe('registered send_email\nrefused true 404 not_found\nfunction tool_search\n');
  });

  it('TypeScript with module NodeNext type-checks against the shipped declarations', async () => {
    // No @types/node in the project: the DOM lib supplies the fetch Request/Response the client's types name.
    const compilerOptions = {
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      lib: ['ES2023', 'DOM'],
      strict: true,
      noEmit: true,
      types: [],
      // The installed dependencies' own declarations are theirs to check.
      skipLibCheck: true,
    };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['use.ts'] }));
    writeFileSync(
      join(app, 'use.ts'),
      `import { createClient, WhetstoneError, type RouteResult, type ToolDef, type ToolRow } from 'whetstone/client';

const tool: ToolDef = { name: 'get_weather', description: 'Weather for a city.', parameters: { type: 'object' } };
const ws = createClient({ url: 'http://localhost:8787', token: 't', agent: 'demo' });

export async function offered(): Promise<string[]> {
  const registered: ToolRow[] = (await ws.registerTools([tool])).tools;
  const routed: RouteResult = await ws.route({ request: 'will it rain in Lisbon?' });
  return [...registered.map((t) => t.name), routed.turn_id];
}
export const refused = (e: unknown): number | null => (e instanceof WhetstoneError ? e.status : null);
`,
    );
    const clean = await run(process.execPath, [tsc, '-p', '.'], app);
    expect(clean).toMatchObject({ code: 0, stdout: '' });

    // The types are the real ones, not `any`: a wrong use is an error that names the fields.
    writeFileSync(
      join(app, 'use.ts'),
      `import type { ToolRow } from 'whetstone/client';
export const wrong: number = null as unknown as ToolRow;
`,
    );
    const wrong = await run(process.execPath, [tsc, '-p', '.'], app);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toMatch(
      /use\.ts\(2,14\): error TS2322: Type '\{ name: string;.*' is not assignable to type 'number'/,
    );
  });
});
