/**
 * A webhook receiver on loopback, started in Node by test/global-setup.ts: it stands for the
 * receivers on the internet. Each receiver is named by the path: `POST /hook/<name>` records the
 * request's headers and raw body and answers the next status scripted for that name (200 once the
 * script is used up); `POST /_script/<name> {statuses, reply?}` scripts it (`reply`: the JSON body
 * every answer carries, `{ok}` by default: a tool's test endpoint answers `{result}`);
 * `GET /_received/<name>` → `[{headers, body}]` in arrival order.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { listenLoopback } from './helpers/loopback.ts';

export interface ReceivedHook {
  headers: Record<string, string>;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received = new Map<string, ReceivedHook[]>();
  const scripts = new Map<string, number[]>();
  const replies = new Map<string, unknown>();
  const server = createServer(async (req, res) => {
    const [, route, name = ''] = (req.url ?? '').split('/');
    const body = await readBody(req);
    const reply = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (req.method === 'POST' && route === 'hook') {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.set(name, [...(received.get(name) ?? []), { headers, body }]);
      const status = scripts.get(name)?.shift() ?? 200;
      return reply(status, replies.has(name) ? replies.get(name) : { ok: status < 300 });
    }
    if (req.method === 'POST' && route === '_script') {
      const script = JSON.parse(body) as { statuses: number[]; reply?: unknown };
      scripts.set(name, script.statuses);
      if (script.reply !== undefined) replies.set(name, script.reply);
      return reply(200, {});
    }
    if (req.method === 'GET' && route === '_received') return reply(200, received.get(name) ?? []);
    return reply(404, { error: 'no such route' });
  });
  return listenLoopback(server, 'the receiver');
}
