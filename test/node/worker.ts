/**
 * Starts the real Worker with `wrangler dev` for the Node-side tests (the CLI and the example run
 * in Node, not in workerd): migrations applied to a fresh local D1 in a temporary directory, a
 * random ADMIN_TOKEN passed with --var (it wins over a developer's .dev.vars), free ports. The tests
 * talk to it through a small front (`front` below) that sends again a request wrangler's dev proxy
 * lost on its way to the Worker.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer as createHttpServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { waitForHealth } from '../../scripts/wait-for-health.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const wrangler = join(root, 'node_modules/wrangler/bin/wrangler.js');

export interface RunningWorker {
  url: string;
  token: string;
  stop(): Promise<void>;
}

/** Starts `wrangler dev` on a free port and resolves once `/healthz` answers. */
export async function startWorker(timeoutMs = 120_000): Promise<RunningWorker> {
  const persist = mkdtempSync(join(tmpdir(), 'whetstone-node-'));
  const migrate = spawnSync(
    process.execPath,
    [wrangler, 'd1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persist],
    {
      cwd: root,
      env: { ...process.env, CI: 'true' },
      encoding: 'utf8',
    },
  );
  if (migrate.status !== 0) throw new Error(`migrations failed:\n${migrate.stdout}\n${migrate.stderr}`);
  // Both ports are held open together while chosen: picked one after the other, the second could be
  // the port the first just released.
  const [port, inspector] = await freePorts(2);
  // Strong, as src/core/admin-token.ts requires: 43 random base64url characters.
  const token = `test_${randomBytes(32).toString('base64url')}`;
  const args = [
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    String(inspector),
    '--persist-to',
    persist,
  ];
  const child = spawn(
    process.execPath,
    [
      wrangler,
      ...args,
      '--var',
      `ADMIN_TOKEN:${token}`,
      // The Node-side tests keep the workerd suite's behaviour: request limits off (vitest.config.ts).
      '--var',
      `UPSTREAM_SECRET_KEY:${randomBytes(32).toString('base64')}`,
      // and webhooks may go to a receiver on loopback (test/node/webhook-snippet.test.ts).
      ...[
        'RATE_LIMIT_PER_MINUTE:0',
        'RATE_LIMIT_AGENT_PER_MINUTE:0',
        'RATE_LIMIT_AUTH_FAILURES_PER_MINUTE:0',
        'WEBHOOKS_ALLOW_LOCAL:true',
        'UPSTREAMS_ALLOW_LOCAL:true',
      ].flatMap((v) => ['--var', v]),
      '--show-interactive-dev-session=false',
    ],
    {
      cwd: root,
      // The tests never edit wrangler.toml: a config watcher could only reload the Worker mid-request.
      env: { ...process.env, CI: 'true', WRANGLER_CI_DISABLE_CONFIG_WATCHING: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      // Every test after this fails with ECONNREFUSED: say why once, with what wrangler printed.
      if (!stopping)
        console.error(`wrangler dev exited during the tests (code ${code}, signal ${signal}):\n${log.slice(-4000)}`);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const front = await startFront(Number(port), () => log);
  const stop = async () => {
    stopping = true;
    await front.close();
    // A reload mid-run answers a POST or PUT in flight with wrangler's 503 "Your worker restarted
    // mid-request": nothing in the tests changes the Worker's files, so say it, with what wrangler
    // printed around it, for the test that saw the 503.
    const reloads = log.split('\n').filter((line) => line.includes('Reloading local server')).length;
    if (reloads > 0)
      console.error(`wrangler dev reloaded the Worker ${reloads} time(s) during the tests:\n${log.slice(-4000)}`);
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(persist, { recursive: true, force: true });
  };
  try {
    if (!(await waitForHealth(url, timeoutMs, () => child.exitCode !== null, token)))
      throw new Error(
        child.exitCode !== null ? 'wrangler dev exited' : `no answer from ${url}/healthz in ${timeoutMs} ms`,
      );
  } catch (err) {
    await stop();
    throw new Error(`wrangler dev did not start: ${String(err)}\n${log.slice(-4000)}`);
  }
  return { url: front.url, token, stop };
}

/** What wrangler's dev proxy answers, with status 503, when its request to the Worker failed. */
const LOST = 'Your worker restarted mid-request';

/**
 * A loopback front for `wrangler dev` on `port`, passing every request and answer through as they
 * are (method, path, headers, body; answers streamed), except one: wrangler's dev proxy answers a
 * request whose connection to the Worker broke with 503 "Your worker restarted mid-request", and
 * sends only GET and HEAD again itself. Its check for a reload compares the request's URL with the
 * Worker's bare address, so any path but "/" reads as a reload
 * (node_modules/wrangler/templates/startDevWorker/ProxyWorker.ts): a pooled connection that breaks
 * under a POST, nothing of ours, failed a conformance scenario once in seven clean-clone runs. The
 * front sends such a request again, up to twice, and says so on stderr with wrangler's log, so a
 * Worker that truly restarts still shows (and a reload is reported by `stop` as before). A request sent
 * again may be a write the Worker already did: the message names it, so a test that then sees a
 * doubled write points at it.
 */
async function startFront(port: number, log: () => string): Promise<{ url: string; close(): Promise<void> }> {
  // One connection per request: a pooled socket the other side has closed is the failure this
  // front exists for, so it does not add its own.
  const agent = new Agent({ keepAlive: false });
  const send = (req: IncomingMessage, body: Buffer) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const up = request(
        { host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers, agent },
        resolve,
      );
      up.on('error', reject);
      up.end(body);
    });
  const server = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    try {
      for (let attempt = 0; ; attempt++) {
        const answer = await send(req, body);
        if (answer.statusCode === 503 && attempt < 2) {
          const parts: Buffer[] = [];
          for await (const chunk of answer) parts.push(chunk as Buffer);
          const text = Buffer.concat(parts).toString();
          if (text.startsWith(LOST)) {
            console.error(
              `wrangler dev's proxy lost ${req.method} ${req.url} on its way to the Worker; sent again:\n${log().slice(-2000)}`,
            );
            continue;
          }
          res.writeHead(503, answer.headers);
          res.end(text);
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
    } catch (err) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`the test front could not reach wrangler dev: ${String(err)}`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `n` distinct free loopback ports, all held open until every one is chosen. */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    return typeof address === 'object' && address ? address.port : 0;
  });
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  return ports;
}
