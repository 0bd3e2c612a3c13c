import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The Node-side tests: what runs in Node rather than in workerd (the CLI, the example agent loop),
// against the real Worker under `wrangler dev` (test/node/global-setup.ts). `npm test` runs them
// after the workerd suite of vitest.config.ts. The global setup also builds dist/ first: the CLI runs
// from there, as it does once installed.
export default defineConfig({
  // The TypeScript source, as tsconfig.json `paths` says; the package's exports point at dist/.
  resolve: { alias: { 'whetstone/client': fileURLToPath(new URL('./src/client/index.ts', import.meta.url)) } },
  test: {
    include: ['test/node/**/*.test.ts'],
    globalSetup: ['./test/node/global-setup.ts'],
    // One file at a time: they share one `wrangler dev`, and on a loaded 2-core machine a browser test
    // beside the CLI and example runs starved each other into timeouts.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
