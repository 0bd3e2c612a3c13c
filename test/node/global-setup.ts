import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startWorker } from './worker.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `npm run build` (dist/, which bin/whetstone.mjs runs, so the CLI tests run what an install runs),
 * then one `wrangler dev` for the whole Node-side run; tests get its URL and admin token by `inject`.
 */
export default async function setup(project: TestProject) {
  const build = spawnSync('npm', ['run', 'build'], {
    cwd: root,
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
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
  }
}
