/** The CLI as a user runs it: `node bin/whetstone.mjs …` against the Worker under `wrangler dev`. */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { createClient, type ToolDef } from '../../src/client/index.ts';
import { seedOrderFailures } from '../helpers/orders.ts';

const bin = fileURLToPath(new URL('../../bin/whetstone.mjs', import.meta.url));
const url = inject('workerUrl');
const token = inject('adminToken');
const dir = mkdtempSync(join(tmpdir(), 'whetstone-cli-'));

const tools = [
  {
    name: 'get_weather',
    description: 'Current weather and forecast for a city: temperature, rain, wind.',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
  {
    type: 'function',
    function: {
      name: 'send_email',
      description: 'Send an email message to a recipient.',
      parameters: { type: 'object', properties: { to: { type: 'string' } } },
    },
  },
  {
    name: 'convert_currency',
    description: "Convert an amount of money between currencies at today's rate.",
    input_schema: { type: 'object', properties: { amount: { type: 'number' } } },
  },
] satisfies ToolDef[];

let n = 0;
const agentId = () => {
  n += 1;
  return `cli-${Date.now().toString(36)}-${n}-${Math.random().toString(36).slice(2, 6)}`;
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with WHETSTONE_* set for `agent` (unless `env` overrides them). */
function cli(args: string[], agent: string | null, env: Record<string, string> = {}): Promise<Run> {
  const base: Record<string, string> = { WHETSTONE_URL: url, WHETSTONE_TOKEN: token };
  if (agent !== null) base.WHETSTONE_AGENT = agent;
  // worker-configuration.d.ts (wrangler types) puts the Worker's vars on process.env's type; a child needs none.
  const childEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...base,
    ...env,
  };
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: childEnv as NodeJS.ProcessEnv }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The CLI's main() in this process, with its output captured. */
async function inProcess(args: string[], env: Record<string, string>): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { out: (t) => (stdout += `${t}\n`), err: (t) => (stderr += `${t}\n`), env });
  return { code, stdout, stderr };
}

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

async function registered(): Promise<string> {
  const agent = agentId();
  await createClient({ url, token, agent }).registerTools(tools);
  return agent;
}

/** A fresh agent seeded with the order desk's failures (test/helpers/orders.ts). */
async function seedFailures(): Promise<string> {
  const agent = agentId();
  await seedOrderFailures(createClient({ url, token, agent }));
  return agent;
}

describe('whetstone CLI', () => {
  it('imports tools from an array or {tools} file and lists them as a table', async () => {
    const agent = agentId();
    const imported = await cli(['tools', 'import', file('tools.json', tools)], agent);
    expect(imported).toMatchObject({ code: 0, stderr: '' });
    expect(imported.stdout.split('\n').slice(0, 2)).toEqual([
      '3 tool(s) registered',
      expect.stringMatching(/^NAME\s+VERSION\s+EXAMPLES\s+NOTES\s+UPDATED$/),
    ]);
    expect(imported.stdout).toMatch(/^get_weather\s+1\s+0\s+0\s+\d{4}-/m);

    const again = await cli(['tools', 'import', file('wrapped.json', { tools }), '--json'], agent);
    expect(again.code).toBe(0);
    const answer = JSON.parse(again.stdout);
    expect(answer.tools.map((t: { name: string; version: number }) => [t.name, t.version])).toEqual([
      ['get_weather', 1],
      ['send_email', 1],
      ['convert_currency', 1],
    ]);

    const listed = await cli(['tools', '--json'], agent);
    expect(JSON.parse(listed.stdout).tools).toHaveLength(3);
  });

  it('routes a request: the ranked tools as a table, or the RouteResult as JSON', async () => {
    const agent = await registered();
    const table = await cli(['route', 'will', 'it', 'rain', 'in', 'Lisbon?', '--k', '2'], agent);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^turn [0-9a-f-]{36}$/);
    expect(lines[1]).toMatch(/^RANK\s+TOOL\s+SCORE$/);
    expect(lines[2]).toMatch(/^1\s+get_weather\s+\d\.\d{3}$/);
    expect(lines).toHaveLength(4);

    const json = JSON.parse(
      (await cli(['route', 'email my landlord', '--json', '--conversation', 'c-1'], agent)).stdout,
    );
    expect(json).toMatchObject({ routed: true, tools: expect.any(Array), model_tools: expect.any(Array) });
    expect(json.tools[0].name).toBe('send_email');
  });

  it('reviews, lists, shows, applies and undoes a revision', async () => {
    const agent = await seedFailures();
    const dry = await cli(['review', '--dry-run'], agent);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(
      /^review \S+ \(dry run: nothing stored\): 1 revision\(s\), \d+ refused, \d+ model call\(s\)\n/,
    );
    expect(JSON.parse((await cli(['revisions', '--json'], agent)).stdout)).toEqual({
      revisions: [],
      next_cursor: null,
    });

    const review = JSON.parse((await cli(['review', '--json'], agent)).stdout);
    const id: string = review.revisions[0].revision_id;
    const listed = await cli(['revisions', '--tool', 'get_order'], agent);
    expect(listed.stdout).toMatch(
      new RegExp(
        `^REVISION\\s+TOOL\\s+STATUS\\s+CREATED\\s+ADDS\n${id}\\s+get_order\\s+proposed\\s+\\S+\\s+\\d+ notes?`,
      ),
    );
    // Nothing of lines is applied yet; the review applied only the routing memory it took from the calls.
    const remembered = JSON.parse((await cli(['revisions', '--status', 'applied', '--json'], agent)).stdout);
    expect(remembered.revisions.map((r: { kind?: string; approved_by: string }) => [r.kind, r.approved_by])).toEqual(
      review.memory.map(() => ['memory', 'whetstone:routing_memory']),
    );

    const shown = await cli(['show', id], agent);
    expect(shown.code).toBe(0);
    expect(shown.stdout.split('\n')[0]).toBe(`revision ${id}  tool get_order  status proposed`);
    expect(shown.stdout).toContain(`Notes:\n  ${review.revisions[0].notes_added[0]}`);
    expect(shown.stdout).toMatch(/Evidence:\nKIND\s+HOW\s+TEXT\nfailed_call/);

    const applied = await cli(['apply', id, '--by', 'ana'], agent);
    expect(applied).toMatchObject({ code: 0, stderr: '' });
    expect(applied.stdout).toMatch(new RegExp(`^applied revision ${id} of get_order \\(now applied\\): \\d+ notes?`));
    expect((await createClient({ url, token, agent }).tool('get_order')).notes).toEqual(
      review.revisions[0].notes_added,
    );

    const undone = await cli(['undo', 'get_order', '--by', 'ana', '--json'], agent);
    expect(JSON.parse(undone.stdout)).toMatchObject({ revision_id: id, status: 'undone' });
    const again = await cli(['apply', id, '--by', 'ana'], agent);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^whetstone: refused \(409 conflict\)/);
  });

  it('dismisses a proposed revision with a reason', async () => {
    const agent = await seedFailures();
    const id: string = JSON.parse((await cli(['review', '--json'], agent)).stdout).revisions[0].revision_id;
    const dismissed = await cli(['dismiss', id, '--by', 'bo', '--reason', 'not now'], agent);
    expect(dismissed.code).toBe(0);
    expect(dismissed.stdout).toMatch(new RegExp(`^dismissed revision ${id} of get_order \\(now dismissed\\)`));
    const shown = await cli(['show', id, '--json'], agent);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      status: 'dismissed',
      approved_by: 'bo',
      dismiss_reason: 'not now',
    });
  });

  it('lists usage flags and unregistered tools', async () => {
    const agent = await registered();
    const client = createClient({ url, token, agent });
    await client.recordCalls([
      { tool: 'lookup_order', arguments: { order_id: 'A-1' }, success: false, error: 'no such order' },
    ]);
    const flags = await cli(['flags', '--json'], agent);
    expect(flags.code).toBe(0);
    expect(JSON.parse(flags.stdout)).toEqual(await client.flags());
    const unregistered = await cli(['unregistered'], agent);
    expect(unregistered.code).toBe(0);
    expect(unregistered.stdout).toMatch(
      /^NAME\s+CALLS\s+FAILURES\s+LAST SEEN\s+DRAFT FROM\nlookup_order\s+1\s+1\s+\S+\s+inferred\n$/,
    );
  });

  it('prints routing quality per day and per revision as tables, or the JSON answer', async () => {
    const agent = await registered();
    const client = createClient({ url, token, agent });
    const routed = await client.route({ request: 'will it rain in Oslo tomorrow', k: 1 });
    expect(routed.tools.map((t) => t.name)).toEqual(['get_weather']);
    await client.recordCalls([
      { tool: 'get_weather', arguments: { city: 'Oslo' }, success: true, turn_id: routed.turn_id },
    ]);
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const text = await cli(['quality', '--days', '2'], agent);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(
      [
        'DATE        ROUTED  SERVED  HITS  HIT RATE  MRR    MISSES  CONFUSIONS  FAILED',
        `${yesterday}  0       0       0     -         -      0       0           0`,
        `${today}  1       1       1     100.0%    1.000  0       0           0`,
        '',
        'Revisions:',
        '(none)',
        '',
      ].join('\n'),
    );
    const json = await cli(['quality', '--days', '2', '--tool', 'get_weather', '--json'], agent);
    expect(JSON.parse(json.stdout)).toEqual(await client.quality({ days: 2, tool: 'get_weather' }));
    const bad = await cli(['quality', '--days', 'x'], agent);
    expect(bad.code).toBe(2);
  });

  it('exits 1 with the error body when the API refuses', async () => {
    const agent = await registered();
    const invalid = await cli(['tools', 'import', file('invalid.json', [{ name: 'bad name!' }])], agent);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toBe('');
    expect(invalid.stderr).toMatch(
      /^whetstone: refused \(400 invalid_request\): the request does not match the schema\n {2}\{/,
    );

    const missing = await cli(['show', 'no-such-revision', '--json'], agent);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr).error.code).toBe('not_found');

    const badToken = await cli(['tools'], agent, { WHETSTONE_TOKEN: 'nope' });
    expect(badToken).toMatchObject({
      code: 1,
      stderr: 'whetstone: refused (401 unauthorized): the token is not valid\n',
    });

    const unreachable = await cli(['flags'], agent, { WHETSTONE_URL: 'http://127.0.0.1:9' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^whetstone: cannot reach the API/);
  });

  it('exits 2 for usage mistakes and sends nothing', async () => {
    const agent = agentId();
    const cases: [string[], string | null, RegExp][] = [
      [['frobnicate'], agent, /unknown command: frobnicate/],
      [['tools'], null, /no agent: pass --agent or set WHETSTONE_AGENT/],
      [['apply', 'rev-1'], agent, /apply needs --by <name>/],
      [['undo'], agent, /undo needs a tool name/],
      [['route'], agent, /route needs the request text/],
      [['revisions', '--status', 'maybe'], agent, /--status must be one of proposed, applied, dismissed, undone/],
      [['tools', 'import', join(dir, 'absent.json')], agent, /cannot read .*absent\.json/],
      [
        ['tools', 'import', file('object.json', { name: 'x' })],
        agent,
        /neither a JSON array of tools nor \{"tools": \[…\]\}/,
      ],
      [['flags', '--colour'], agent, /Unknown option '--colour'/],
    ];
    // The real binary for one case; the rest through the same main() in-process (a Node start each is slow).
    const spawned = await cli(['frobnicate'], agent);
    expect(spawned).toEqual({
      code: 2,
      stdout: '',
      stderr: 'whetstone: unknown command: frobnicate\nRun "whetstone help" for the commands.\n',
    });
    for (const [args, a, message] of cases) {
      const run = await inProcess(args, {
        WHETSTONE_URL: url,
        WHETSTONE_TOKEN: token,
        ...(a ? { WHETSTONE_AGENT: a } : {}),
      });
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe('');
    }
    const noToken = await inProcess(['tools', '--agent', agent], { WHETSTONE_URL: url });
    expect(noToken).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^whetstone: no token: pass --token or set WHETSTONE_TOKEN/),
    });
    await expect(createClient({ url, token, agent }).tools()).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('prints the usage with exit 0 for help', async () => {
    const help = await cli(['help'], null);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: whetstone <command> \[options\]/);
  });
});
