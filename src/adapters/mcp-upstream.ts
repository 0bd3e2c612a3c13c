/**
 * The client side of the gateway: talks to one upstream MCP server over Streamable HTTP with the
 * official SDK's `Client` (its JSON Schema validator is the Cloudflare one: workerd forbids the
 * code generation the default validator does). Each use is one short connection: `initialize`,
 * the request, close (which ends the session with DELETE when the upstream gave one). Costs one
 * round trip more than a bare request; holds nothing between calls, so a Worker isolate can drop
 * it at any time.
 *
 * Limits, per upstream: `timeoutMs` bounds each request (a hung upstream costs its caller that
 * long and no one else); an answer larger than `RESPONSE_BYTES` is cut off and refused; a request
 * is never retried, since a `tools/call` that timed out may still have reached the upstream and
 * done its work.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { z } from 'zod';
import { VERSION } from '../version.ts';

/** Where an upstream is and what to send it; header values are already opened. */
export interface UpstreamTarget {
  name: string;
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** A tool as the upstream lists it (MCP `Tool`). */
export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

/** Most bytes of one upstream answer (a whole `tools/list` page or a tool result). */
export const RESPONSE_BYTES = 4 * 1024 * 1024;
/** Most `tools/list` pages one sync reads, and most tools it takes: a runaway cursor ends here. */
export const MAX_LIST_PAGES = 50;
export const MAX_LISTED_TOOLS = 2000;

/** Why a request to an upstream failed, by what the caller should be told. */
export type UpstreamFailureKind = 'timeout' | 'unreachable' | 'rejected' | 'too_large' | 'protocol';

/** A failed exchange with an upstream; `rpcCode` is set when the upstream answered a JSON-RPC error. */
export class UpstreamError extends Error {
  constructor(
    readonly upstream: string,
    readonly kind: UpstreamFailureKind,
    message: string,
    readonly rpcCode?: number,
  ) {
    super(`upstream ${upstream}: ${message}`);
    this.name = 'UpstreamError';
  }
}

const AnyResult = z.looseObject({});
const ListResult = z.looseObject({
  tools: z.array(
    z.looseObject({ name: z.string(), description: z.string().optional(), inputSchema: z.looseObject({}) }),
  ),
  nextCursor: z.string().optional(),
});

/** `initialize`, then `tools/list` page by page: every tool the upstream lists. */
export async function listUpstreamTools(target: UpstreamTarget): Promise<ListedTool[]> {
  return withClient(target, async (client, options) => {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const params = cursor === undefined ? {} : { cursor };
      const answer = await client.request({ method: 'tools/list', params }, ListResult, options);
      for (const t of answer.tools)
        tools.push({ name: t.name, description: t.description, inputSchema: t.inputSchema });
      if (tools.length > MAX_LISTED_TOOLS)
        throw new UpstreamError(target.name, 'too_large', `lists more than ${MAX_LISTED_TOOLS} tools`);
      cursor = answer.nextCursor;
      if (cursor === undefined) return tools;
    }
    throw new UpstreamError(target.name, 'too_large', `tools/list went on past ${MAX_LIST_PAGES} pages`);
  });
}

/** `initialize`, then one `tools/call`; the result exactly as the upstream answered it. */
export async function callUpstreamTool(
  target: UpstreamTarget,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return withClient(target, (client, options) =>
    client.request({ method: 'tools/call', params: { name, arguments: args } }, AnyResult, options),
  );
}

type RequestOptions = { timeout: number; signal: AbortSignal };

/** Runs `use` on a connected client; every failure becomes an UpstreamError naming the upstream. */
async function withClient<T>(
  target: UpstreamTarget,
  use: (client: Client, options: RequestOptions) => Promise<T>,
): Promise<T> {
  const abort = new AbortController();
  // The whole exchange, initialize included, has the upstream's time limit once more as slack.
  const timer = setTimeout(() => abort.abort(), target.timeoutMs * 2);
  const options = { timeout: target.timeoutMs, signal: abort.signal };
  const transport = new StreamableHTTPClientTransport(new URL(target.url), {
    requestInit: { headers: target.headers },
    fetch: limitedFetch(target.name, abort.signal),
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 0,
      maxReconnectionDelay: 0,
      reconnectionDelayGrowFactor: 1,
    },
  });
  const client = new Client(
    { name: 'whetstone-gateway', version: VERSION },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  try {
    await client.connect(transport, options);
    return await use(client, options);
  } catch (err) {
    throw asUpstreamError(target, err);
  } finally {
    clearTimeout(timer);
    abort.abort();
    await client.close().catch(() => undefined);
  }
}

/**
 * `fetch` that gives up with the exchange, refuses an answer larger than RESPONSE_BYTES, and never
 * follows a redirect: the address was checked when the upstream was registered, and a redirect
 * would take the request (and its Authorization header) somewhere that was not.
 */
function limitedFetch(upstream: string, signal: AbortSignal) {
  return async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const merged = init?.signal ? AbortSignal.any([init.signal, signal]) : signal;
    const res = await fetch(input, { ...init, signal: merged, redirect: 'manual' });
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      throw new UpstreamError(upstream, 'rejected', `answered a redirect (${res.status}), which is not followed`);
    }
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > RESPONSE_BYTES) {
      await res.body?.cancel();
      throw new UpstreamError(upstream, 'too_large', `answered ${declared} bytes, more than ${RESPONSE_BYTES}`);
    }
    if (!res.body) return res;
    let seen = 0;
    const cap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > RESPONSE_BYTES)
          controller.error(new UpstreamError(upstream, 'too_large', `answered more than ${RESPONSE_BYTES} bytes`));
        else controller.enqueue(chunk);
      },
    });
    return new Response(res.body.pipeThrough(cap), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

function asUpstreamError(target: UpstreamTarget, err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const cause = err instanceof Error && err.cause instanceof UpstreamError ? err.cause : null;
  if (cause) return cause;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof McpError) {
    if (err.code === -32001 || /timed out/i.test(message))
      return new UpstreamError(target.name, 'timeout', `no answer within ${target.timeoutMs} ms`);
    return new UpstreamError(target.name, 'rejected', stripMcpPrefix(message), err.code);
  }
  if (/abort/i.test(message) || (err instanceof Error && err.name === 'AbortError'))
    return new UpstreamError(target.name, 'timeout', `no answer within ${target.timeoutMs} ms`);
  if (/too_large|more than \d+ bytes/.test(message))
    return new UpstreamError(target.name, 'too_large', `answered more than ${RESPONSE_BYTES} bytes`);
  if (/HTTP \d{3}|Error POSTing|status/i.test(message)) return new UpstreamError(target.name, 'unreachable', message);
  if (err instanceof TypeError) return new UpstreamError(target.name, 'unreachable', message);
  return new UpstreamError(target.name, 'protocol', message);
}

/** The SDK writes "MCP error -32602: …"; the caller names the code itself. */
function stripMcpPrefix(message: string): string {
  return message.replace(/^MCP error -?\d+: /, '');
}
