import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';

// Applies migrations/ to the test D1 before each file (idempotent: applied ones are recorded).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
