import type { TestProject } from 'vitest/node';
import { startWorker } from './worker.ts';

/** One `wrangler dev` for the whole Node-side run; tests get its URL and admin token by `inject`. */
export default async function setup(project: TestProject) {
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
