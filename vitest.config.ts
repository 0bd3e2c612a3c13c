import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Every test runs inside workerd with real local D1 and Durable Objects (README "Working on Whetstone").
export default defineConfig(async () => {
  // The Worker serves the dashboard's bundled browser code: test the bundle of the current source.
  execFileSync(process.execPath, [fileURLToPath(new URL('./scripts/build-dashboard.mjs', import.meta.url))], {
    stdio: 'inherit',
  });
  const migrations = await readD1Migrations(fileURLToPath(new URL('./migrations', import.meta.url)));
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: './wrangler.toml' },
        miniflare: {
          bindings: {
            // Strong, as a deployment's must be (src/core/admin-token.ts); test/helpers/requests.ts ADMIN.
            ADMIN_TOKEN: 'test-admin-token-Qm7xK2pV9wR4tZ8nB3cL6hJ5',
            // Request limits are on by default (docs/configuration.md); the suite fires bursts and
            // failed authentications from one address, so it turns them off here, and
            // test/security/rate-limit.test.ts checks them (and their defaults) with an env of its own.
            RATE_LIMIT_PER_MINUTE: '0',
            // Seals upstream header values (src/adapters/secret-box.ts): 32 bytes, base64.
            UPSTREAM_SECRET_KEY: 'dGVzdC11cHN0cmVhbS1zZWNyZXQta2V5LTMyLWJ5dGU=',
            RATE_LIMIT_AGENT_PER_MINUTE: '0',
            RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '0',
            // Webhooks to the loopback receiver of test/global-setup.ts (docs/configuration.md).
            WEBHOOKS_ALLOW_LOCAL: 'true',
            // MCP upstreams on loopback over plain http (test/api/upstreams.test.ts, src/core/upstream-url.ts).
            UPSTREAMS_ALLOW_LOCAL: 'true',
            TEST_MIGRATIONS: migrations,
          },
        },
      }),
    ],
    // The TypeScript source, as tsconfig.json `paths` says; the package's exports point at dist/.
    resolve: { alias: { 'whetstone/client': fileURLToPath(new URL('./src/client/index.ts', import.meta.url)) } },
    test: {
      include: ['test/**/*.test.ts'],
      // test/node/ runs in Node against `wrangler dev` (vitest.node.config.ts).
      exclude: ['test/node/**', 'node_modules/**'],
      setupFiles: ['./test/setup.ts'],
      globalSetup: ['./test/global-setup.ts'],
      testTimeout: 30_000,
      hookTimeout: 60_000,
    },
  };
});
