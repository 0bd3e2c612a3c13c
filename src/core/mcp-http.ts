/**
 * The HTTP rules of the agent's MCP endpoint that do not need a request object: which browser
 * origins may talk to it (a server must check `Origin` so a DNS-rebound page cannot reach it), the
 * CORS headers it answers, and whether a JSON-RPC body is an empty batch (an Invalid Request).
 */

/** The headers an MCP client sends and may read back (Streamable HTTP transport). */
export const MCP_CORS_ALLOW_HEADERS =
  'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id';
export const MCP_CORS_EXPOSE_HEADERS = 'mcp-session-id, mcp-protocol-version, www-authenticate';

/**
 * The origins listed in a comma-separated setting, normalised (`scheme://host[:port]`, lower case);
 * an entry that is not an origin is dropped.
 */
export function parseOrigins(setting: string | undefined): string[] {
  if (!setting) return [];
  const out: string[] = [];
  for (const part of setting.split(',')) {
    const origin = normaliseOrigin(part.trim());
    if (origin) out.push(origin);
  }
  return out;
}

function normaliseOrigin(value: string): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Whether a request with this `Origin` header may reach the endpoint: no header (not a browser) or
 * the endpoint's own origin or one of the allowed ones. `null` (an opaque origin) and anything else
 * is refused.
 *
 * The own origin is read from the request's `Host`, which a page reached by DNS rebinding sets to
 * its own name: `evil.example` resolving to 127.0.0.1 sends `Host: evil.example` and
 * `Origin: http://evil.example`, equal to each other. Such a page reaches a server on the user's
 * machine, which speaks plain HTTP; a deployment on Cloudflare is reached by its own name only.
 * So a plain-HTTP own origin counts only under a loopback name (`localhost`, `127.0.0.1`, `[::1]`);
 * any other must be listed.
 */
export function originAllowed(
  origin: string | null | undefined,
  requestUrl: string,
  allowed: readonly string[],
): boolean {
  if (origin === undefined || origin === null) return true;
  const normalised = normaliseOrigin(origin);
  if (!normalised) return false;
  const own = new URL(requestUrl);
  if (normalised === own.origin.toLowerCase() && (own.protocol === 'https:' || LOOPBACK.has(own.hostname))) return true;
  return allowed.includes(normalised);
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The CORS headers for an allowed origin (none for a request that sent no `Origin`). */
export function corsHeaders(origin: string | null | undefined): Record<string, string> {
  if (!origin) return {};
  return {
    'access-control-allow-origin': origin,
    'access-control-expose-headers': MCP_CORS_EXPOSE_HEADERS,
    vary: 'Origin',
  };
}

/** Whether a request body (text) is a JSON array with no element: a JSON-RPC Invalid Request. */
export function isEmptyBatch(body: string): boolean {
  const trimmed = body.trim();
  if (!trimmed.startsWith('[')) return false;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return Array.isArray(parsed) && parsed.length === 0;
  } catch {
    return false;
  }
}
