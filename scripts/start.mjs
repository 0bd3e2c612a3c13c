#!/usr/bin/env node
// `npm start [-- --port N]`: apply D1 migrations locally, make sure .dev.vars has an ADMIN_TOKEN
// (generated on first start and printed), then run `wrangler dev`. No account, no key, offline.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitForHealth } from './wait-for-health.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const wrangler = fileURLToPath(new URL('../node_modules/wrangler/bin/wrangler.js', import.meta.url));
const args = process.argv.slice(2);
const portIndex = args.indexOf('--port');
const port = portIndex >= 0 ? args[portIndex + 1] : '8787';

const migrate = spawnSync(process.execPath, [wrangler, 'd1', 'migrations', 'apply', 'DB', '--local'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, CI: 'true' }, // answers wrangler's confirmation prompt
});
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const varsPath = `${root}.dev.vars`;
const vars = existsSync(varsPath) ? readFileSync(varsPath, 'utf8') : '';
let token = /^ADMIN_TOKEN=(.+)$/m.exec(vars)?.[1]?.trim();
// The Worker refuses to serve with a weak ADMIN_TOKEN; this is src/core/admin-token.ts's rule
// (at least 32 characters, at least 10 different ones), repeated here since this runs in plain Node.
const weak = (t) => [...t].length < 32 || new Set(t).size < 10;
if (!token || weak(token)) {
  const old = token;
  token = `wst_admin_${randomBytes(32).toString('base64url')}`;
  const line = `ADMIN_TOKEN=${token}`;
  const next = old
    ? vars.replace(/^ADMIN_TOKEN=.*$/m, line)
    : `${vars}${vars && !vars.endsWith('\n') ? '\n' : ''}${line}\n`;
  writeFileSync(varsPath, next, { mode: 0o600 });
  console.log(
    old
      ? '\nThe ADMIN_TOKEN in .dev.vars was too weak (fewer than 32 characters, or fewer than 10 different ones): replaced with a generated one.'
      : '\nGenerated ADMIN_TOKEN into .dev.vars (keep it; it is not committed).',
  );
}
// The key that seals upstream header values (src/adapters/secret-box.ts): 32 random bytes, kept.
const current = existsSync(varsPath) ? readFileSync(varsPath, 'utf8') : '';
if (!/^UPSTREAM_SECRET_KEY=.+$/m.test(current)) {
  const line = `UPSTREAM_SECRET_KEY=${randomBytes(32).toString('base64')}`;
  writeFileSync(varsPath, `${current}${current && !current.endsWith('\n') ? '\n' : ''}${line}\n`, { mode: 0o600 });
  console.log('Generated UPSTREAM_SECRET_KEY into .dev.vars (it seals MCP upstream headers; keep it).');
}
const banner = () =>
  console.log(
    `\n  Whetstone on http://localhost:${port}\n  Dashboard:  http://localhost:${port}/\n  ADMIN_TOKEN=${token}\n`,
  );
banner();

const devArgs = [wrangler, 'dev', '--ip', '127.0.0.1', ...(portIndex >= 0 ? [] : ['--port', port]), ...args];
// Offline by default: without this, wrangler fetches request.cf data from the internet at start and
// prints a stack trace when it cannot (the service does not read request.cf).
const env = { CLOUDFLARE_CF_FETCH_ENABLED: 'false', ...process.env };
const dev = spawn(process.execPath, devArgs, { cwd: root, stdio: 'inherit', env });
const stop = (signal) => dev.kill(signal);
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
dev.on('exit', (code) => process.exit(code ?? 0));

// The banner again once the service answers, below wrangler's own output, where it is seen.
waitForHealth(`http://127.0.0.1:${port}`, 120_000, () => dev.exitCode !== null, token).then((up) => up && banner());
