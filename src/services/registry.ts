/**
 * Tool registration (docs/api.md `PUT …/tools`): normalise, version, augment, embed,
 * write row + vector + version entry in one batch, then tell the index and the offer counter.
 */
import { augmentTools } from '../augmentation.ts';
import type { AugmentInput } from '../core/ports.ts';
import { modelBudgetReason } from './model-budget.ts';
import type { StoredTool } from '../core/records.ts';
import { argumentNames, canonicalJson, normalizeToolDef, type NormalizedTool } from '../core/tooldef.ts';
import type { Services } from '../env.ts';
import { ApiError } from '../errors.ts';
import { DEFAULT_SETTINGS, type Example, type ToolDef } from '../schemas.ts';
import type { ToolWrite } from '../core/ports.ts';
import { settingsOf } from './route-serving.ts';
import { embedTools } from './tool-vectors.ts';

export interface RegisterResult {
  tools: StoredTool[];
  augmentation: { name: string; augmented: boolean; reason: string | null }[] | undefined;
}

type AugmentResult = { ok: true; description: string; requests: string[] } | { ok: false; reason: string };
type Augmented = Map<string, AugmentResult>;

/**
 * 400 when the tools the agent would hold pass its `max_registered_tools` (docs/configuration.md),
 * before any model call, embedding or write. Counted against the rows stored when the request began.
 */
function rejectPastToolCap(
  agent: string,
  stored: number,
  incoming: readonly NormalizedTool[],
  byName: ReadonlyMap<string, StoredTool>,
  cap: number,
): void {
  const added = new Set(incoming.map((t) => t.definition.name).filter((name) => !byName.has(name))).size;
  if (stored + added <= cap) return;
  throw new ApiError(
    'invalid_request',
    `agent ${agent} would hold ${(stored + added).toLocaleString('en-US')} tools; its max_registered_tools allows ${cap.toLocaleString('en-US')}`,
    [
      {
        code: 'too_many_tools',
        path: ['tools'],
        message: `${stored.toLocaleString('en-US')} tools are registered and this request adds ${added.toLocaleString('en-US')}; remove tools or raise max_registered_tools`,
      },
    ],
  );
}

/**
 * Augmentation within the agent's model-call budget (`model_calls_per_hour`): the tools past what
 * is left of the hour are registered with their plain docstring, the reason given for each.
 */
async function augmentWithinBudget(
  svc: Services,
  agent: string,
  tools: readonly AugmentInput[],
  perHour: number,
): Promise<Augmented> {
  const unique = [...new Map(tools.map((t) => [t.name, t])).values()];
  if (unique.length === 0) return new Map();
  const budget = await svc.modelBudget.take(agent, unique.length, perHour, Date.now());
  const out = await augmentTools(svc.model, unique.slice(0, budget.granted));
  const reason = modelBudgetReason(perHour, budget.nextInMs);
  for (const t of unique.slice(budget.granted)) out.set(t.name, { ok: false, reason });
  return out;
}

/** Registers (or re-registers) tools; an identical definition is a no-op, a changed one a new version. */
export async function registerTools(
  svc: Services,
  agent: string,
  defs: readonly ToolDef[],
  augment: boolean,
  now: string,
): Promise<RegisterResult> {
  const incoming = defs.map(normalizeToolDef);
  rejectDuplicateNames(incoming);
  const [existing, versions, agentRow] = await Promise.all([
    svc.store.listTools(agent),
    svc.store.lastVersions(agent),
    svc.store.getAgent(agent),
  ]);
  const settings = agentRow ? settingsOf(agentRow.settings) : DEFAULT_SETTINGS;
  const maxQueries = settings.max_queries;
  const byName = new Map(existing.map((t) => [t.name, t]));
  rejectPastToolCap(agent, existing.length, incoming, byName, settings.max_registered_tools);
  const hashes = await Promise.all(incoming.map(definitionHash));
  const changed = incoming.flatMap((t, i) =>
    byName.get(t.definition.name)?.definition_hash === hashes[i] ? [] : [{ t, hash: hashes[i] ?? '' }],
  );

  const augmented: Augmented = augment
    ? await augmentWithinBudget(
        svc,
        agent,
        changed.map(({ t }) => ({
          name: t.definition.name,
          docstring: t.definition.description,
          argument_names: argumentNames(t.definition.parameters),
        })),
        settings.model_calls_per_hour,
      )
    : new Map();
  const rows = changed.map(({ t, hash }) =>
    buildRow(
      t,
      hash,
      byName.get(t.definition.name),
      versions.get(t.definition.name) ?? 0,
      augmented.get(t.definition.name),
      maxQueries,
      now,
    ),
  );
  const vectors = rows.length > 0 ? await embedRows(svc, rows) : [];
  rows.forEach((r, i) => {
    r.vector = vectors[i] ?? null;
  });

  const writes: ToolWrite[] = rows.map((tool, i) => ({
    tool,
    expected_version: byName.get(tool.name)?.version ?? null,
    definition: changed[i]?.t.definition ?? {
      name: tool.name,
      description: tool.docstring,
      parameters: tool.parameters,
    },
    source: 'registered',
  }));
  // The agent row is written with the rows, after augmentation and embedding, so a
  // registration that fails (502 from the embedder, a D1 error) leaves no trace of a new agent.
  if (writes.length > 0) await svc.store.writeTools(agent, writes, now, [svc.store.ensureAgentStatement(agent, now)]);
  else await svc.store.ensureAgent(agent, now);
  if (svc.vectorIndex && rows.length > 0) {
    await svc.vectorIndex.upsert(
      agent,
      rows.flatMap((r) => (r.vector ? [{ id: r.name, vector: r.vector }] : [])),
    );
  }
  const created = rows.filter((r) => !byName.has(r.name)).map((r) => r.name);
  if (created.length > 0) await svc.offers.toolsRegistered(agent, created);

  const written = new Map(rows.map((r) => [r.name, r]));
  return {
    tools: incoming.map((t) => written.get(t.definition.name) ?? (byName.get(t.definition.name) as StoredTool)),
    augmentation: augment
      ? changed.map(({ t }) => augmentOutcome(t.definition.name, augmented.get(t.definition.name)))
      : undefined,
  };
}

function rejectDuplicateNames(tools: readonly NormalizedTool[]): void {
  const seen = new Set<string>();
  const dups = tools.map((t) => t.definition.name).filter((n) => (seen.has(n) ? true : (seen.add(n), false)));
  if (dups.length > 0) {
    throw new ApiError(
      'invalid_request',
      'each tool name may appear once per request',
      dups.map((name) => ({ path: ['tools'], message: `duplicate tool name ${name}` })),
    );
  }
}

async function definitionHash(t: NormalizedTool): Promise<string> {
  const text = canonicalJson({ definition: t.definition, examples: t.examples });
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The new row. A changed definition keeps what learning added (notes, "Not for" lines, example call,
 * learned examples) and, unless augmented again now, the earlier augmentation; hand-written examples
 * (source `unknown`) are replaced by the new definition's.
 */
function buildRow(
  t: NormalizedTool,
  hash: string,
  prev: StoredTool | undefined,
  lastVersion: number,
  aug: AugmentResult | undefined,
  maxQueries: number,
  now: string,
): StoredTool {
  const kept: Example[] = (prev?.examples ?? []).filter(
    (e) => e.source === 'learned' || (e.source === 'synthetic' && !aug?.ok),
  );
  const synthetic: Example[] = aug?.ok
    ? aug.requests.map((text) => ({ text, source: 'synthetic', revision_id: null }))
    : [];
  const hand: Example[] = t.examples.map((text) => ({ text, source: 'unknown', revision_id: null }));
  return {
    name: t.definition.name,
    docstring: t.definition.description,
    description: aug?.ok ? aug.description : (prev?.description ?? null),
    parameters: t.definition.parameters,
    examples: capExamples(dedupeExamples([...hand, ...kept, ...synthetic]), maxQueries),
    notes: prev?.notes ?? [],
    avoid: prev?.avoid ?? [],
    call_example: prev?.call_example ?? null,
    memory: prev?.memory ?? [],
    queries_source: aug?.ok ? 'augmentation' : (prev?.queries_source ?? null),
    version: Math.max(prev?.version ?? 0, lastVersion) + 1,
    definition_hash: hash,
    vector: null,
    embedder: '',
    reviewed_seq: prev?.reviewed_seq ?? 0,
    created_at: prev?.created_at ?? now,
    updated_at: now,
  };
}

/**
 * At most `max` examples (docs/learning.md caps): learned ones outrank synthetic ones, so synthetic
 * examples give way first, the newest first; what the author wrote is kept.
 */
function capExamples(examples: Example[], max: number): Example[] {
  let extra = examples.length - max;
  if (extra <= 0) return examples;
  const out = [...examples];
  for (let i = out.length - 1; i >= 0 && extra > 0; i--) {
    if (out[i]?.source === 'synthetic') {
      out.splice(i, 1);
      extra--;
    }
  }
  return out;
}

function dedupeExamples(examples: Example[]): Example[] {
  const seen = new Set<string>();
  return examples.filter((e) => {
    const key = e.text.trim().toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Embeds rows with the configured embedder; a provider failure is a 502 and nothing is written. */
export async function embedRows(svc: Services, rows: StoredTool[]): Promise<Float32Array[]> {
  const vectors = await embedTools(svc.embedder, rows);
  for (const r of rows) r.embedder = svc.embedder.id;
  return vectors;
}

function augmentOutcome(name: string, a: AugmentResult | undefined) {
  return { name, augmented: a?.ok === true, reason: a === undefined ? 'not augmented' : a.ok ? null : a.reason };
}
