import { defineConfig } from 'vitest/config';

// The Node-side tests: what runs in Node rather than in workerd (the CLI, the example agent loop),
// against the real Worker under `wrangler dev` (test/node/global-setup.ts). `npm test` runs them
// after the workerd suite of vitest.config.ts.
export default defineConfig({
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
