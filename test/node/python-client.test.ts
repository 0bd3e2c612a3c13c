/**
 * The Python client's own tests (clients/python/tests, `python3 -m unittest`, standard library only)
 * against the Worker this run started: its flows, errors, retries, in-step check with the served
 * OpenAPI document, and an offline `pip install` into a fresh virtual environment.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, inject, it } from 'vitest';

const dir = fileURLToPath(new URL('../../clients/python', import.meta.url));

interface Run {
  code: number | null;
  output: string;
}

function unittest(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-v'], {
      cwd: dir,
      env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

it('passes python3 -m unittest in clients/python against the running Worker', { timeout: 300_000 }, async () => {
  const run = await unittest({ WHETSTONE_TEST_URL: inject('workerUrl'), WHETSTONE_TEST_TOKEN: inject('adminToken') });
  if (run.code !== 0) console.error(run.output);
  expect(run.code).toBe(0);
  // unittest's closing lines: "Ran N tests", then "OK" with no skips or expected failures.
  expect(run.output).toMatch(/^Ran \d+ tests? in [\d.]+s$/m);
  expect(run.output.trimEnd().split('\n').at(-1)).toBe('OK');
});
