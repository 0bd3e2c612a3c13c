/**
 * Bearer tokens (docs/api.md): the ADMIN_TOKEN has every right; agent keys (`wsk_<key_id>_<secret>`)
 * reach one agent with a role: `agent` (route, report, read), `operator` (everything for the agent),
 * `approver` (read, and apply, dismiss or undo revisions) or `read_only` (read). Keys are stored as salted SHA-256 and compared
 * in constant time; a key is never logged. Another agent's rows answer 404, so ids are not probed.
 */
import { ApiError, notFound } from './errors.ts';
import type { ToolStore } from './core/ports.ts';
import type { ToolAccess } from './core/tool-access.ts';
import type { KeyRole, Right } from './schemas.ts';

export type Principal =
  | { kind: 'admin'; id: 'admin' }
  | { kind: 'key'; id: string; agent: string; role: KeyRole; tool_access: ToolAccess | null };

const KEY_PATTERN = /^wsk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** Who the Authorization header names, or a 401. */
export async function authenticate(
  header: string | undefined,
  adminToken: string | undefined,
  store: Pick<ToolStore, 'getKey'>,
): Promise<Principal> {
  const token = /^Bearer ([\x21-\x7e]+)$/.exec(header ?? '')?.[1];
  if (!token) throw new ApiError('unauthorized', 'send Authorization: Bearer <token>');
  if (adminToken && (await isAdminToken(token, adminToken))) return { kind: 'admin', id: 'admin' };
  const m = KEY_PATTERN.exec(token);
  if (!m?.[1] || !m[2]) throw new ApiError('unauthorized', 'the token is not valid');
  const key = await store.getKey(m[1]);
  if (!key || key.revoked_at !== null || !(await equalSecrets(await hashSecret(key.salt, m[2]), key.hash))) {
    throw new ApiError('unauthorized', 'the token is not valid');
  }
  const tool_access = key.tool_access === null ? null : (JSON.parse(key.tool_access) as ToolAccess);
  return { kind: 'key', id: key.key_id, agent: key.agent, role: key.role, tool_access };
}

/**
 * What a route needs: `read` (a read of the agent, or a preview that writes nothing), `agent` (the
 * agent's own traffic: routing, reports, MCP), `decide` (apply, dismiss, undo a revision),
 * `operator` (register tools, pins, settings, reviews), `admin`.
 */
export type Need = Right;

/** The needs each key role meets: an approver decides but never registers or configures; a read-only key for dashboards only reads. */
const MEETS: Record<KeyRole, ReadonlySet<Need>> = {
  agent: new Set(['read', 'agent']),
  operator: new Set(['read', 'agent', 'decide', 'operator']),
  approver: new Set(['read', 'decide']),
  read_only: new Set(['read']),
};

const REFUSAL: Record<Exclude<Need, 'read' | 'admin'>, string> = {
  agent: 'this route needs an agent or operator key',
  decide: 'this route needs an operator or approver key',
  operator: 'this route needs an operator key',
};

const NEEDS: readonly Need[] = ['read', 'agent', 'decide', 'operator', 'admin'];

/**
 * The rights a principal holds on its agent, in the order of NEEDS: the one rule `authorize` and
 * `GET …/whoami` both read, so what the dashboard shows is what the API allows.
 */
export function rightsOf(p: Principal): Need[] {
  if (p.kind === 'admin') return [...NEEDS];
  return NEEDS.filter((need) => need === 'read' || MEETS[p.role].has(need));
}

/** docs/api.md rights: the admin everything; a key only its agent, and only what its role meets. */
export function authorize(p: Principal, agent: string | null, need: Need): void {
  if (p.kind === 'admin') return;
  if (need === 'admin') throw new ApiError('forbidden', 'this route needs the admin token');
  if (agent === null || p.agent !== agent) throw notFound(`agent ${agent ?? ''}`);
  if (need === 'read' || rightsOf(p).includes(need)) return;
  throw new ApiError('forbidden', REFUSAL[need]);
}

/** A new key: the clear text is returned once; only salt and hash are stored. */
export async function mintKey(): Promise<{ key_id: string; key: string; salt: string; hash: string }> {
  const key_id = hex(crypto.getRandomValues(new Uint8Array(8)));
  const secret = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const salt = hex(crypto.getRandomValues(new Uint8Array(16)));
  return { key_id, key: `wsk_${key_id}_${secret}`, salt, hash: await hashSecret(salt, secret) };
}

async function hashSecret(salt: string, secret: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${salt}:${secret}`));
  return hex(new Uint8Array(digest));
}

/**
 * The ADMIN_TOKEN's digest, kept per isolate (one SHA-256 per request instead of two on
 * the hot path). Keyed by the token, so a changed secret is digested again. The digest, not the
 * promise, is kept: a promise belongs to the request that made it.
 */
let adminDigest: { token: string; digest: ArrayBuffer } | null = null;

/** Constant-time comparison of a presented token with the ADMIN_TOKEN (hashed, as equalSecrets). */
async function isAdminToken(presented: string, adminToken: string): Promise<boolean> {
  if (adminDigest?.token !== adminToken) {
    adminDigest = {
      token: adminToken,
      digest: await crypto.subtle.digest('SHA-256', new TextEncoder().encode(adminToken)),
    };
  }
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(presented));
  return crypto.subtle.timingSafeEqual(digest, adminDigest.digest);
}

/** Constant-time comparison of two secrets (hashed first so lengths never leak). */
async function equalSecrets(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([
    crypto.subtle.digest('SHA-256', new TextEncoder().encode(a)),
    crypto.subtle.digest('SHA-256', new TextEncoder().encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(da, db);
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}
