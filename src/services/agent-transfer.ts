/**
 * Export and import of one agent (docs/api.md "Export and import"). Export streams NDJSON a page at a
 * time. Import reads the whole body, checks every line before writing anything, embeds the tools
 * with this deployment's embedder (a provider failure writes nothing), then writes; a write that
 * fails part way deletes what the import wrote, so the agent does not exist afterwards.
 */
import {
  globalIds,
  parseImport,
  renameIds,
  seqMapper,
  type ExportLine,
  type ImportBundle,
  type ToolLine,
} from '../core/agent-export.ts';
import type { StoredTool } from '../core/records.ts';
import type { Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import { embedRows } from './registry.ts';
import { agentTurnsWritten } from './turn-writer.ts';

/** The agent as NDJSON lines, or 404 when it does not exist (checked before the stream starts). */
export async function exportAgent(svc: Services, agent: string): Promise<ReadableStream<Uint8Array>> {
  const first = await svc.agentTransfer.agentLine(agent);
  if (!first) throw notFound(`agent ${agent}`);
  // The export holds every turn /route has answered, also those still in this isolate's write batch.
  await agentTurnsWritten(agent);
  const pages = svc.agentTransfer.lines(agent);
  const encoder = new TextEncoder();
  const encode = (lines: readonly ExportLine[]) => encoder.encode(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encode([first]));
        return;
      }
      const next = await pages.next();
      if (next.done) controller.close();
      else controller.enqueue(encode(next.value));
    },
  });
}

/** What an import wrote, per kind of line. */
export interface ImportSummary {
  agent: string;
  imported: Record<
    'tools' | 'tool_versions' | 'revisions' | 'reviews' | 'pins' | 'trace_tools' | 'turns' | 'calls' | 'outcomes',
    number
  >;
  /** Revision and review ids another agent here already had, with the new id each got. */
  renamed: Record<string, string>;
}

/** Imports an export into `agent`, which must not exist yet (409). A malformed line is a 400 naming it. */
export async function importAgent(svc: Services, agent: string, text: string, now: string): Promise<ImportSummary> {
  const parsed = parseImport(text);
  if (!parsed.ok) throw new ApiError('invalid_request', parsed.error.message, parsed.error.issues);
  if (await svc.store.getAgent(agent)) throw exists(agent);
  const renamed = await freshIds(svc, parsed.bundle);
  const bundle = renameIds(parsed.bundle, renamed);
  const rows = bundle.tools.map(storedTool);
  const vectors = rows.length > 0 ? await embedRows(svc, rows) : [];
  rows.forEach((r, i) => {
    r.vector = vectors[i] ?? null;
  });
  if (!(await svc.agentTransfer.claimAgent(agent, bundle.agent, now))) throw exists(agent);
  try {
    await writeBundle(svc, agent, bundle, rows);
  } catch (err) {
    await svc.store.deleteAgent(agent);
    await svc.agents.get(svc.agents.idFromName(agent)).forget();
    throw err;
  }
  if (svc.vectorIndex && rows.length > 0) {
    await svc.vectorIndex.upsert(
      agent,
      rows.flatMap((r) => (r.vector ? [{ id: r.name, vector: r.vector }] : [])),
    );
  }
  if (rows.length > 0)
    await svc.offers.toolsRegistered(
      agent,
      rows.map((r) => r.name),
    );
  return { agent, imported: counts(bundle), renamed: Object.fromEntries(renamed) };
}

const exists = (agent: string) =>
  new ApiError('conflict', `agent ${agent} exists; import into a new agent id, or delete this one first`);

/** New ids for the revision and review ids this database holds already (they are unique across agents). */
async function freshIds(svc: Services, b: ImportBundle): Promise<Map<string, string>> {
  const taken = await svc.agentTransfer.takenIds(globalIds(b));
  const reviews = new Set(b.reviews.map((r) => r.review_id));
  return new Map([...taken].map((id) => [id, `${reviews.has(id) ? 'rvw' : 'rev'}_${crypto.randomUUID()}`] as const));
}

/** The log first, so review marks (call seqs of the exporter) can be mapped onto the new seqs. */
async function writeBundle(svc: Services, agent: string, b: ImportBundle, rows: StoredTool[]): Promise<void> {
  await svc.agentTransfer.insertLog(agent, b);
  const seqs = await svc.agentTransfer.callSeqs(agent);
  const pairs = [...b.calls]
    .sort((x, y) => x.seq - y.seq)
    .flatMap((c) => {
      const next = seqs.get(c.call_id);
      return next === undefined ? [] : [[c.seq, next] as const];
    });
  const mark = seqMapper(pairs);
  for (const r of rows) r.reviewed_seq = mark(r.reviewed_seq);
  await svc.agentTransfer.insertTools(agent, rows);
  await svc.agentTransfer.insertHistory(agent, b);
  await svc.agentTransfer.finishImport(agent, mark(b.agent.last_review_seq), seqs);
}

function storedTool(t: ToolLine): StoredTool {
  const { type: _type, ...row } = t;
  return { ...row, vector: null, embedder: '' };
}

function counts(b: ImportBundle): ImportSummary['imported'] {
  return {
    tools: b.tools.length,
    tool_versions: b.versions.length,
    revisions: b.revisions.length,
    reviews: b.reviews.length,
    pins: b.pins.length,
    trace_tools: b.traceTools.length,
    turns: b.turns.length,
    calls: b.calls.length,
    outcomes: b.outcomes.length,
  };
}
