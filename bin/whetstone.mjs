#!/usr/bin/env node
// The `whetstone` CLI (README "CLI"). The commands live in src/cli/main.ts and use the typed client
// of src/client/; tsx runs that TypeScript in Node 20 without a build step.
import { tsImport } from 'tsx/esm/api';

const { main } = await tsImport('../src/cli/main.ts', import.meta.url);
process.exitCode = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
});
