#!/usr/bin/env node
// The `whetstone` CLI (docs/integrations.md "CLI"). The commands are src/cli/main.ts, compiled to
// dist/ by `npm run build` (which `npm pack` and the Node-side tests run); plain Node runs the build.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('whetstone: the CLI is not built (no dist/); run `npm run build` in the checkout\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
});
