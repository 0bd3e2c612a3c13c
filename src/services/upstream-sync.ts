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
import type {
  ListedDefinition,
  QuarantineRecord,
  ServedTool,
  SyncOutcome,
  UpstreamRecord,
  UpstreamToolRecord,
} from '../core/ports.ts';
import {
  checkDefinition,
  type DefinitionFinding,
  type KnownTool,
  type ToolFlag,
  toolFlags,
} from '../core/definition-check.ts';
import { definitionChanges, onlyAddsOptional } from '../core/definition-diff.ts';
import { canonicalJson } from '../core/tooldef.ts';
import { syncBackoffMs, upstreamToolNames } from '../core/upstream-naming.ts';
import { checkUpstreamUrl } from '../core/upstream-url.ts';
import type { Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import { ToolName } from '../schemas.ts';
import { registerTools } from './registry.ts';
import { settingsOf } from './route-serving.ts';

/** A healthy upstream is read again this often (the cron's tick is 10 minutes). */
export const SYNC_INTERVAL_MS = 60 * 60_000;

/** What a PUT asks for; header values in clear, sealed before they are stored. */
export interface UpstreamSettings {
  url: string;
  headers?: Record<string, string> | undefined;
  timeout_ms: number;
}

/** The upstream as answered: header names only, never a value; its held, released and flagged tools. */
export function upstreamView(u: UpstreamRecord, tools: UpstreamToolRecord[], quarantine: QuarantineRecord[] = []) {
  const mine = quarantine.filter((q) => q.upstream === u.name);
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
    tools: tools.map((t) => ({ name: t.tool, remote_name: t.remote_name, available: t.available, flags: t.flags })),
    quarantined: mine
      .filter((q) => q.released_at === null)
      .map((q) => ({
        name: q.remote_name,
        tool: q.tool,
        quarantined_at: q.quarantined_at,
        findings: q.findings.filter((f) => f.severity === 'quarantine'),
      })),
    released: mine.flatMap((q) =>
      q.released_at === null || q.released_by === null
        ? []
        : [
            {
              name: q.remote_name,
              tool: q.tool,
              released_by: q.released_by,
              released_key: q.released_key,
              released_at: q.released_at,
            },
          ],
    ),
    flagged: tools
      .filter((t) => t.available && t.flags.length > 0)
      .map((t) => ({ name: t.tool, remote_name: t.remote_name, flags: t.flags })),
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
  const [served, ownNames, agentRow] = await Promise.all([
    svc.upstreams.tools(agent),
    svc.store.toolNames(agent),
    svc.store.getAgent(agent),
  ]);
  const policy = settingsOf(agentRow?.settings ?? {}).definition_changes;
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
  const before = new Map(served.filter((s) => s.upstream === name).map((s) => [s.remote_name, s]));
  const released = new Map(
    (await svc.upstreams.quarantine(agent, name)).flatMap((q) =>
      q.released_at === null ? [] : [[q.remote_name, q.definition_hash] as const],
    ),
  );
  const accepted: { tool: string; remote_name: string; def: ListedTool; flags: ToolFlag[] }[] = [];
  const held: SyncOutcome['held'] = [];
  const keep: string[] = [];
  /** Tools served with the definition in force while a change to it is held. */
  const pinned: ServedTool[] = [];
  for (const def of listed) {
    const tool = names?.get(def.name) ?? def.name;
    const check = checkDefinition(
      { name: def.name, description: def.description ?? '', parameters: def.inputSchema },
      known,
    );
    const previous = before.get(def.name);
    const flags = [
      ...toolFlags(def.name, check.findings, known, previous === undefined),
      ...(previous?.flags.filter((f) => f.kind === 'name_collision') ?? []),
    ];
    if (!check.ok) {
      const hash = await listedHash(def);
      if (released.get(def.name) === hash) keep.push(def.name);
      else {
        report.quarantined.push({ name: def.name, findings: check.findings });
        held.push({
          remote_name: def.name,
          tool,
          definition: listedDefinition(def),
          definition_hash: hash,
          findings: check.findings,
          quarantined_at: now,
        });
        keep.push(def.name);
        continue;
      }
    }
    // Pinned: a changed definition of a tool already served waits for a person; the one in force stays.
    const changes = previous?.definition ? definitionChanges(previous.definition, listedDefinition(def)) : [];
    const byPolicy =
      policy === 'apply_optional_additions' &&
      previous?.definition != null &&
      onlyAddsOptional(previous.definition, changes);
    if (changes.length > 0 && previous && !byPolicy) {
      const hash = await listedHash(def);
      if (released.get(def.name) !== hash) {
        report.quarantined.push({ name: def.name, findings: changes });
        held.push({
          remote_name: def.name,
          tool: previous.tool,
          definition: listedDefinition(def),
          definition_hash: hash,
          findings: changes,
          quarantined_at: now,
        });
        keep.push(def.name);
        if (previous.available) pinned.push({ tool: previous.tool, remote_name: def.name, flags, definition: null });
        continue;
      }
      keep.push(def.name);
    }
    if (!ToolName.safeParse(tool).success)
      report.skipped.push({ name: def.name, reason: 'the name is not 1-128 characters of A-Z a-z 0-9 _ . - /' });
    else accepted.push({ tool, remote_name: def.name, def, flags });
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
      served: [
        ...accepted.map((a) => ({
          tool: a.tool,
          remote_name: a.remote_name,
          flags: a.flags,
          definition: listedDefinition(a.def),
        })),
        ...pinned,
      ],
      held,
      keep,
      status: 'ok',
      last_error: null,
      failures: 0,
      next_sync_at,
    },
    now,
  );
  const servedNow = new Set([...accepted, ...pinned].map((a) => a.tool));
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

/** The definition as the upstream listed it: what is hashed, held and, once released, registered. */
function listedDefinition(def: ListedTool): ListedDefinition {
  return { name: def.name, description: def.description ?? '', inputSchema: def.inputSchema };
}

/** A release holds for one definition: this hash of it. */
async function listedHash(def: ListedTool): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonicalJson(listedDefinition(def))));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Why a release was refused: nothing held under that name, or it is not held (any more). */
export type ReleaseOutcome =
  | { ok: true; tool: string; served: boolean; skipped: string | null }
  | { ok: false; reason: 'unknown' | 'not_quarantined' };

/**
 * A person releases a held definition (the caller has the right to decide): it is registered and
 * served at once, and later syncs serve it while the upstream lists this same definition; a changed
 * one is checked again. A name that cannot be a tool's name is released but still not served.
 */
export async function releaseTool(
  svc: Services,
  agent: string,
  upstream: string,
  remoteName: string,
  by: { released_by: string; actor: string },
  now: string,
): Promise<ReleaseOutcome> {
  const [u, q] = await Promise.all([
    svc.upstreams.get(agent, upstream),
    svc.upstreams.quarantined(agent, upstream, remoteName),
  ]);
  if (!u) return { ok: false, reason: 'unknown' };
  if (!q) {
    // A tool the upstream serves without a finding is known, just not held.
    const served = (await svc.upstreams.tools(agent)).some(
      (t) => t.upstream === upstream && t.remote_name === remoteName,
    );
    return { ok: false, reason: served ? 'not_quarantined' : 'unknown' };
  }
  if (q.released_at !== null) return { ok: false, reason: 'not_quarantined' };
  const nameOk = ToolName.safeParse(q.tool).success;
  if (nameOk) await registerTools(svc, agent, [{ ...q.definition, name: q.tool }], false, now);
  const flags = releasedFlags(q);
  const done = await svc.upstreams.release(
    q,
    by,
    now,
    nameOk ? { tool: q.tool, remote_name: remoteName, flags, definition: q.definition } : null,
  );
  if (!done) return { ok: false, reason: 'not_quarantined' };
  return {
    ok: true,
    tool: q.tool,
    served: nameOk,
    skipped: nameOk ? null : 'the name is not 1-128 characters of A-Z a-z 0-9 _ . - /',
  };
}

/** A released tool keeps its flag findings as flags; the quarantine findings stay on the released row. */
function releasedFlags(q: QuarantineRecord): ToolFlag[] {
  return toolFlags(q.remote_name, q.findings, [], false);
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
