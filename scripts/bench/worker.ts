/**
 * Starts the Worker for the bench the way a developer runs it (`wrangler dev`, real local D1 and
 * Durable Objects), but from a bundle built once into a throwaway folder: `wrangler dev` watches
 * its sources and would reload mid-measurement when anyone edits `src/`. The folder also holds the
 * D1 and Durable Object state (`--persist-to`), so the developer's own `.wrangler/` and `.dev.vars`
 * are never touched. Loopback only. BENCH_LOG_LEVEL (default warn) is wrangler's --log-level: `debug`
 * with WRANGLER_LOG_PATH keeps what workerd said when a soak fails.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitForHealth } from '../wait-for-health.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
/**
 * No prompts, no telemetry, no update check and no download of the `Request.cf` placeholder
 * (miniflare fetches it from the internet otherwise): the bench runs offline and unattended.
 */
const QUIET_ENV = {
  ...process.env,
  CI: 'true',
  WRANGLER_SEND_METRICS: 'false',
  NO_UPDATE_NOTIFIER: '1',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
};

/** A running Worker: its base URL, the admin token it was started with, and how to stop it. */
export interface BenchWorker {
  url: string;
  token: string;
  /** The last lines wrangler printed (warnings and errors only: it runs with --log-level warn). */
  log(): string;
  /** The process group of wrangler and its workerd processes (for the CPU figures). */
  pgid: number;
  /** Ends the processes and removes the folder. */
  stop(): void;
  /** Ends the processes and keeps the folder (its state), so it can be filled and launched again. */
  halt(): Promise<void>;
}

/** A free loopback port (the OS picks it; closed again before wrangler binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function wrangler(args: string[], cwd: string): void {
  const run = spawnSync(process.execPath, [WRANGLER, ...args], { cwd, env: QUIET_ENV, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`wrangler ${args.slice(0, 2).join(' ')} failed:\n${run.stdout}\n${run.stderr}`);
}

/**
 * A copy of wrangler.toml whose entry is the prebuilt bundle and whose migrations are the repo's,
 * without its `[build]` step: that step (the dashboard bundle) already ran for the dry-run build,
 * and run again from the throwaway folder it finds no scripts and `wrangler dev` fails to start.
 * Every binding stays as the developer configured it.
 */
function benchConfig(dir: string): string {
  const toml = readFileSync(join(ROOT, 'wrangler.toml'), 'utf8')
    .replace(/^\[build\]\n(?:(?!\[)[^\n]*\n)*/m, '')
    .replace(/^main\s*=.*$/m, `main = ${JSON.stringify(join(dir, 'out/index.js'))}`)
    .replace(/^migrations_dir\s*=.*$/m, `migrations_dir = ${JSON.stringify(join(ROOT, 'migrations'))}`);
  const path = join(dir, 'wrangler.toml');
  writeFileSync(path, toml);
  return path;
}

/** A built and migrated Worker not started yet: its D1 can be filled directly before launch. */
export interface PreparedWorker {
  dir: string;
  config: string;
  /** The `--persist-to` folder: local D1 and Durable Object state. */
  state: string;
  /** The local D1 SQLite file (miniflare keeps one per database under `v3/d1`). */
  d1File(): string;
  cleanup(): void;
}

/** Builds the bundle into a throwaway folder and applies the migrations to a throwaway D1 there. */
export function prepareWorker(progress: (line: string) => void): PreparedWorker {
  const dir = mkdtempSync(join(tmpdir(), 'whetstone-bench-'));
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    progress('building the Worker bundle');
    wrangler(['deploy', '--dry-run', '--outdir', join(dir, 'out')], ROOT);
    const config = benchConfig(dir);
    const state = join(dir, 'state');
    progress('applying D1 migrations to a throwaway database');
    wrangler(['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', state, '-c', config], ROOT);
    const d1File = (): string => {
      const folder = join(state, 'v3/d1/miniflare-D1DatabaseObject');
      const files = readdirSync(folder).filter((f) => f.endsWith('.sqlite') && f !== 'metadata.sqlite');
      const [file] = files;
      if (files.length !== 1 || file === undefined)
        throw new Error(`expected one D1 file in ${folder}: ${files.join(', ')}`);
      return join(folder, file);
    };
    return { dir, config, state, d1File, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}

/** Builds, migrates and starts the Worker on a free loopback port; resolves once /healthz answers. */
/** `--var` values that turn every request limit off (docs/configuration.md `RATE_LIMIT_*`). */
export const LIMITS_OFF = [
  'RATE_LIMIT_PER_MINUTE:0',
  'RATE_LIMIT_AGENT_PER_MINUTE:0',
  'RATE_LIMIT_AUTH_FAILURES_PER_MINUTE:0',
];

/** `vars`: more `NAME:value` Worker variables (the eval's `--privacy` sets PRIVACY_RULE). */
export async function startWorker(
  progress: (line: string) => void,
  vars: readonly string[] = [],
): Promise<BenchWorker> {
  return launchWorker(prepareWorker(progress), progress, vars);
}

/**
 * Starts `wrangler dev` over a prepared Worker on a free loopback port; resolves once /healthz
 * answers. `stop()` ends the process group and removes the folder.
 */
export async function launchWorker(
  prepared: PreparedWorker,
  progress: (line: string) => void,
  vars: readonly string[] = [],
): Promise<BenchWorker> {
  const { dir, config, state, cleanup } = prepared;
  try {
    const [port, inspector] = [await freePort(), await freePort()];
    // Strong, as src/core/admin-token.ts requires of any deployment's ADMIN_TOKEN.
    const token = `bench_${randomBytes(24).toString('base64url')}`;
    progress(`starting wrangler dev on 127.0.0.1:${port}`);
    const child = spawn(
      process.execPath,
      [
        WRANGLER,
        'dev',
        '-c',
        config,
        '--no-bundle',
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--inspector-port',
        String(inspector),
        '--persist-to',
        state,
        '--var',
        `ADMIN_TOKEN:${token}`,
        // The bench, soak and eval drive one agent far past a client's allowance on purpose:
        // request limits (on by default, docs/configuration.md) are off here, explicitly.
        ...[...LIMITS_OFF, ...vars].flatMap((v) => ['--var', v]),
        '--show-interactive-dev-session=false',
        '--log-level',
        process.env.BENCH_LOG_LEVEL ?? 'warn',
      ],
      { cwd: dir, env: QUIET_ENV, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-64_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const url = `http://127.0.0.1:${port}`;
    const end = (): void => {
      // The whole process group we started (wrangler and its workerd children), nothing else.
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
    };
    const stop = (): void => {
      end();
      cleanup();
    };
    const halt = async (): Promise<void> => {
      end();
      // Until no process of the group is left: workerd has closed its SQLite files.
      for (let i = 0; i < 300; i++) {
        try {
          process.kill(-(child.pid ?? 0), 0);
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('wrangler dev did not exit within 30 s of SIGTERM');
    };
    if (!(await waitForHealth(url, 90_000, () => child.exitCode !== null, token))) {
      stop();
      throw new Error(
        child.exitCode !== null
          ? `wrangler dev exited (${child.exitCode}):\n${output}`
          : `the Worker did not answer /healthz within 90s:\n${output}`,
      );
    }
    return { url, token, log: () => output, pgid: child.pid ?? 0, stop, halt };
  } catch (err) {
    cleanup();
    throw err;
  }
}
