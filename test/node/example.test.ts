/** examples/agent-loop.ts runs end to end against the Worker, as docs/integrations.md tells a user to run it. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, inject, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

it('registers, routes, calls, records, reviews and applies, offline', async () => {
  const agent = `example-test-${Date.now().toString(36)}`;
  // worker-configuration.d.ts (wrangler types) puts the Worker's vars on process.env's type; a child needs none.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    WHETSTONE_URL: inject('workerUrl'),
    WHETSTONE_TOKEN: inject('adminToken'),
    WHETSTONE_AGENT: agent,
  };
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'examples/agent-loop.ts'],
      { cwd: root, env: env as NodeJS.ProcessEnv },
      (err, out, errOut) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout: out, stderr: errOut }),
    );
  });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  expect(stdout).toContain('> where is my order 1234?\n  offered: get_order');
  expect(stdout).toContain(
    '  FAIL get_order({"order_id":"1234"}): order_id must start with the ORD- prefix\n  ok   get_order({"order_id":"ORD-1234"})',
  );
  expect(stdout).toMatch(/review \S+: 1 revision\(s\) proposed/);

  // What the user would notice: the calls are in the log and the tool now carries what was learned.
  const ws = createClient({ url: inject('workerUrl'), token: inject('adminToken'), agent });
  const [revision] = (await ws.revisions({ status: 'applied' })).revisions;
  expect(revision?.tool).toBe('get_order');
  expect(revision?.evidence.filter((e) => e.kind === 'failed_call')).toHaveLength(2);
  const view = (await ws.tool('get_order')).model_view.function.description;
  expect(view).toContain('Learned from use');
  expect(stdout).toContain(
    view
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n'),
  );
});
