/**
 * An agent's upstream MCP servers (docs/integrations.md "Whetstone as an MCP gateway"): their
 * settings, and the sync that makes their tools the agent's tools. A sync reads the upstream
 * (`initialize`, `tools/list` page by page), names its tools among the agent's
 * (src/core/upstream-naming.ts), holds back a definition the definition check quarantines
 * (src/core/definition-check.ts), registers the rest as any registration does (a changed
 * definition is a new version), and marks the tools it no longer lists unavailable: not routed,
 * not forwarded, their history and learned lines kept.
 */
import { callUpstreamTool, listUpstreamTools, type ListedTool, type UpstreamTarget } from '../adapters/mcp-upstream.ts';
import { UpstreamError } from '../adapters/mcp-upstream.ts';
import type { UpstreamRecord } from '../adapters/d1-upstreams.ts';
import { checkDefinition, type DefinitionFinding, type KnownTool } from '../core/definition-check.ts';
import { syncBackoffMs, upstreamToolNames } from '../core/upstream-naming.ts';
import { checkUpstreamUrl } from '../core/upstream-url.ts';
import type { Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import { ToolName } from '../schemas.ts';
import { registerTools } from './registry.ts';

/** A healthy upstream is read again this often (the cron's tick is 10 minutes). */
export const SYNC_INTERVAL_MS = 60 * 60_000;

/** What a PUT asks for; header values in clear, sealed before they are stored. */
export interface UpstreamSettings {
  url: string;
  headers?: Record<string, string> | undefined;
  timeout_ms: number;
}

/** The upstream as answered: header names only, never a value. */
export function upstreamView(u: UpstreamRecord, tools: { tool: string; remote_name: string; available: boolean }[]) {
  return {
    name: u.name,
    url: u.url,
    header_names: u.header_names,
    timeout_ms: u.timeout_ms,
    status: u.status,
    last_error: u.last_error,
    failures: u.failures,
    last_sync_at: u.last_sync_at,
    next_sync_at: u.next_sync_at,
    tools: tools.map((t) => ({ name: t.tool, remote_name: t.remote_name, available: t.available })),
    created_at: u.created_at,
    updated_at: u.updated_at,
  };
}

/** Creates or replaces an upstream. Omitted `headers` keep the stored ones (they cannot be read back). */
export async function putUpstream(
  svc: Services,
  agent: string,
  name: string,
  settings: UpstreamSettings,
  now: string,
): Promise<UpstreamRecord> {
  const address = checkUpstreamUrl(settings.url, { allowPrivate: svc.allowLocalUpstreams });
  if (!address.ok) {
    const hint = address.reason === 'metadata_address' ? '' : ' (local development: UPSTREAMS_ALLOW_LOCAL=true)';
    throw new ApiError('invalid_request', `url: ${address.message}${address.reason === 'credentials' ? '' : hint}`);
  }
  const existing = await svc.upstreams.get(agent, name);
  let header_names = existing?.header_names ?? [];
  let headers_sealed = existing?.headers_sealed ?? null;
  if (settings.headers !== undefined) {
    header_names = Object.keys(settings.headers).sort();
    headers_sealed = header_names.length === 0 ? null : await seal(svc, agent, name, settings.headers);
  }
  await svc.store.ensureAgent(agent, now);
  await svc.upstreams.put({
    agent,
    name,
    url: address.url,
    header_names,
    headers_sealed,
    timeout_ms: settings.timeout_ms,
    next_sync_at: now,
    created_at: existing?.created_at ?? now,
    updated_at: now,
  });
  const stored = await svc.upstreams.get(agent, name);
  if (!stored) throw notFound(`upstream ${name}`);
  return stored;
}

async function seal(svc: Services, agent: string, name: string, headers: Record<string, string>): Promise<string> {
  if (!svc.secretBox)
    throw new ApiError(
      'internal',
      'configuration: UPSTREAM_SECRET_KEY is not set, so upstream headers cannot be stored (see docs/configuration.md)',
    );
  return svc.secretBox.seal(JSON.stringify(headers), `${agent}/${name}`);
}

/** Where to reach an upstream, its header values opened. */
export async function targetOf(svc: Services, u: UpstreamRecord): Promise<UpstreamTarget> {
  let headers: Record<string, string> = {};
  if (u.headers_sealed !== null) {
    if (!svc.secretBox)
      throw new UpstreamError(u.name, 'protocol', 'its headers are sealed and UPSTREAM_SECRET_KEY is not set');
    try {
      headers = JSON.parse(await svc.secretBox.open(u.headers_sealed, `${u.agent}/${u.name}`)) as Record<
        string,
        string
      >;
    } catch {
      throw new UpstreamError(
        u.name,
        'protocol',
        'its headers do not open with this UPSTREAM_SECRET_KEY: put them again',
      );
    }
  }
  return { name: u.name, url: u.url, headers, timeoutMs: u.timeout_ms };
}

/** A sync's answer: what the upstream listed, what was registered, held back or marked unavailable. */
export interface SyncReport {
  status: 'ok' | 'failing';
  error: string | null;
  listed: number;
  registered: string[];
  unavailable: string[];
  quarantined: { name: string; findings: DefinitionFinding[] }[];
  skipped: { name: string; reason: string }[];
}

/** Reads the upstream and makes its tools the agent's; a failing upstream is marked and backed off. */
export async function syncUpstream(svc: Services, agent: string, name: string, now: string): Promise<SyncReport> {
  const u = await svc.upstreams.get(agent, name);
  if (!u) throw notFound(`upstream ${name}`);
  let listed: ListedTool[];
  try {
    listed = await listUpstreamTools(await targetOf(svc, u));
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    const failures = u.failures + 1;
    const next_sync_at = new Date(Date.parse(now) + syncBackoffMs(failures)).toISOString();
    await svc.upstreams.recordFailure(
      agent,
      name,
      { status: 'failing', last_error: error, failures, next_sync_at },
      now,
    );
    return { status: 'failing', error, listed: 0, registered: [], unavailable: [], quarantined: [], skipped: [] };
  }
  return registerListed(svc, u, listed, now);
}

async function registerListed(
  svc: Services,
  u: UpstreamRecord,
  listed: ListedTool[],
  now: string,
): Promise<SyncReport> {
  const { agent, name } = u;
  const [served, ownNames] = await Promise.all([svc.upstreams.tools(agent), svc.store.toolNames(agent)]);
  const fromUpstreams = new Set(served.map((s) => s.tool));
  const own = new Set(ownNames.filter((n) => !fromUpstreams.has(n)));
  const others = groupOthers(served, name);
  const names = upstreamToolNames([...others, { upstream: name, tools: listed.map((t) => t.name) }], own).get(name);
  const known: KnownTool[] = [
    ...[...own].map((n) => ({ name: n, upstream: null })),
    ...others.flatMap((o) => o.tools.map((t) => ({ name: t, upstream: o.upstream }))),
  ];
  const report: SyncReport = {
    status: 'ok',
    error: null,
    listed: listed.length,
    registered: [],
    unavailable: [],
    quarantined: [],
    skipped: [],
  };
  const accepted: { tool: string; remote_name: string; def: ListedTool }[] = [];
  for (const def of listed) {
    const tool = names?.get(def.name) ?? def.name;
    const check = checkDefinition(
      { name: def.name, description: def.description ?? '', parameters: def.inputSchema },
      known,
    );
    if (!check.ok) report.quarantined.push({ name: def.name, findings: check.findings });
    else if (!ToolName.safeParse(tool).success)
      report.skipped.push({ name: def.name, reason: 'the name is not 1-128 characters of A-Z a-z 0-9 _ . - /' });
    else accepted.push({ tool, remote_name: def.name, def });
  }
  if (accepted.length > 0) {
    const defs = accepted.map((a) => ({
      name: a.tool,
      description: a.def.description ?? '',
      inputSchema: a.def.inputSchema,
    }));
    await registerTools(svc, agent, defs, false, now);
  }
  const next_sync_at = new Date(Date.parse(now) + SYNC_INTERVAL_MS).toISOString();
  await svc.upstreams.recordSync(
    agent,
    name,
    {
      served: accepted.map((a) => ({ tool: a.tool, remote_name: a.remote_name })),
      status: 'ok',
      last_error: null,
      failures: 0,
      next_sync_at,
    },
    now,
  );
  const servedNow = new Set(accepted.map((a) => a.tool));
  report.registered = accepted.map((a) => a.tool);
  report.unavailable = served
    .filter((s) => s.upstream === name && s.available && !servedNow.has(s.tool))
    .map((s) => s.tool);
  return report;
}

/** The other upstreams' available tools, by upstream, as the names they list. */
function groupOthers(served: readonly { upstream: string; remote_name: string; available: boolean }[], self: string) {
  const by = new Map<string, string[]>();
  for (const s of served) {
    if (s.upstream === self || !s.available) continue;
    by.set(s.upstream, [...(by.get(s.upstream) ?? []), s.remote_name]);
  }
  return [...by].map(([upstream, tools]) => ({ upstream, tools }));
}

/** Forwards one call to the upstream that serves `tool`; the result as the upstream answered. */
export async function forwardCall(
  svc: Services,
  upstream: UpstreamRecord,
  remoteName: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return callUpstreamTool(await targetOf(svc, upstream), remoteName, args);
}
