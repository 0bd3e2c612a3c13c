import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { node22 } from './node22.ts';
import { startWorker } from './worker.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `npm run build` (dist/, which bin/whetstone.mjs runs, so the CLI tests run what an install runs),
 * the Node 22 binary the MCP conformance runner needs (test/node/node22.ts: an npm install that took
 * three minutes on a slow registry, so it runs here, before the Worker starts, rather than inside a
 * test's hook while the Worker idles), then one `wrangler dev` for the whole Node-side run; tests
 * get its URL, its admin token and that binary by `inject`.
 */
export default async function setup(project: TestProject) {
  const build = spawnSync('npm', ['run', 'build'], {
    cwd: root,
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
  project.provide('node22', await node22());
  const worker = await startWorker();
  project.provide('workerUrl', worker.url);
  project.provide('adminToken', worker.token);
  return async () => {
    await worker.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    workerUrl: string;
    adminToken: string;
    /** A Node 22 (or newer) binary: this Node, or one installed into node_modules/.cache. */
    node22: string;
  }
}
