/**
 * Authorisation before the body: the right each `/v1` route needs, read from its method and path
 * alone, so a caller without it is refused (401/403/404 exactly as the route itself would answer)
 * before a byte of its body is read, buffered or scanned — an agent key's 16 MiB import is a 403
 * at once. Each route still authorises itself in full; this table only moves the refusal earlier,
 * and `test/security/access-matrix.test.ts` holds both to the same answers.
 */
import type { MiddlewareHandler } from 'hono';
import { authorize, type Need } from '../auth.ts';
import type { AppEnv } from './common.ts';

const SEG = '[^/]+';
/** [method, path under /v1/agents/{agent}, need]; the path is matched whole. */
const TABLE: [string, RegExp, Need][] = [
  ['POST', /^\/(route|calls|traces|outcomes|mcp)$/, 'agent'],
  ['POST', new RegExp(`^/tools/${SEG}/preview$`), 'read'],
  ['PUT', /^\/tools$/, 'operator'],
  ['DELETE', new RegExp(`^/tools/${SEG}$`), 'operator'],
  ['PUT', new RegExp(`^/tools/${SEG}/pin$`), 'operator'],
  ['DELETE', new RegExp(`^/tools/${SEG}/pin$`), 'operator'],
  ['PUT', new RegExp(`^/tools/${SEG}/test-endpoint$`), 'operator'],
  ['DELETE', new RegExp(`^/tools/${SEG}/test-endpoint$`), 'operator'],
  ['POST', new RegExp(`^/tools/${SEG}/undo$`), 'decide'],
  ['PUT', /^\/config$/, 'operator'],
  ['PUT', new RegExp(`^/upstreams/${SEG}$`), 'operator'],
  ['DELETE', new RegExp(`^/upstreams/${SEG}$`), 'operator'],
  ['POST', new RegExp(`^/upstreams/${SEG}/sync$`), 'operator'],
  ['POST', new RegExp(`^/upstreams/${SEG}/tools/${SEG}/release$`), 'decide'],
  ['PUT', /^\/webhooks$/, 'operator'],
  ['POST', /^\/reviews$/, 'operator'],
  ['POST', new RegExp(`^/revisions/${SEG}/(apply|dismiss|try)$`), 'decide'],
  ['POST', /^\/revisions\/bulk$/, 'decide'],
  ['POST', /^\/keys$/, 'admin'],
  ['DELETE', new RegExp(`^/keys/${SEG}$`), 'admin'],
  ['GET', /^\/export$/, 'admin'],
  ['POST', /^\/import$/, 'admin'],
  ['DELETE', /^$/, 'admin'],
];

const AGENT_PATH = /^\/v1\/agents\/([^/]+)(\/.*)?$/;

/** The agent and right a request needs, or null when its path is not one of a route (the router answers it). */
export function needOf(method: string, path: string): { agent: string | null; need: Need } | null {
  if (path === '/v1/agents') return method === 'GET' ? { agent: null, need: 'admin' } : null;
  const m = AGENT_PATH.exec(path);
  if (!m?.[1]) return null;
  const agent = decodeSegment(m[1]);
  const rest = m[2] ?? '';
  for (const [verb, pattern, need] of TABLE) if (verb === method && pattern.test(rest)) return { agent, need };
  // Every other read of an agent is a `read` (the tools, revisions, flags, quality…).
  return method === 'GET' && rest !== '' ? { agent, need: 'read' } : null;
}

/** A path segment as the router reads it; an undecodable one stays as it is (and names no agent). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Refuses a caller without the route's right before the body limit lets its body be read. */
export function preAuthorize(): MiddlewareHandler<AppEnv> {
  return async function preAuthorizeMiddleware(c, next) {
    const need = needOf(c.req.method, c.req.path);
    if (need) authorize(c.get('principal'), need.agent, need.need);
    await next();
  };
}
