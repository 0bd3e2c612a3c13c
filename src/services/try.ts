/**
 * Try before apply (docs/api.md "Try before apply"): what a proposed revision, or an approver's
 * edit of it, would change for real requests, before anyone applies it. The requests it rests on
 * and a sample of the tool's recent served requests (src/core/try-run.ts) are ranked over the
 * whole toolbox now and with the lines applied (as `ranks` is, src/services/review-ranks.ts), and,
 * when the model can call tools, the model picks from the offered model views before and after.
 * A pick of a tool with a test endpoint is sent there (`POST {tool, arguments}` → `{result}`);
 * nothing else ever calls a test endpoint. The run writes nothing: no row, revision or log entry
 * (it takes its model calls from the agent's `model_calls_per_hour`, as a review does).
 */
import { isEmpty, linesOf, type RevisionLines } from '../core/edits.ts';
import { learnedState, planApply } from '../core/learning.ts';
import { mapPool } from '../core/pool.ts';
import type { ToolPick } from '../core/ports.ts';
import type { StoredTool } from '../core/records.ts';
import { modelView, toolboxTokens } from '../core/render.ts';
import { buildRoutingIndex, embeddingText, rankTools, routingDoc } from '../core/routing.ts';
import { testEndpointResult, tryRequests, type ServedCall, type TryRequest } from '../core/try-run.ts';
import { checkUpstreamUrl } from '../core/upstream-url.ts';
import type { Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import type { ModelTool, Revision, Settings, TryAnswer, TryPick } from '../schemas.ts';
import { editedLines, type ApplyEdit } from './apply.ts';
import { modelBudgetReason } from './model-budget.ts';
import { isMemoryRevision, planMemory, withMemory } from './memory.ts';
import { routingDocs, settingsOf } from './routing.ts';
import { embedTools } from './tool-vectors.ts';

/** Model calls a try run makes at once, and how long a test endpoint has to answer. */
const PICK_CONCURRENCY = 4;
const TEST_TIMEOUT_MS = 10_000;
/** A test endpoint's answer is read up to this many bytes; a longer one is reported as too long. */
const TEST_ANSWER_BYTES = 16_384;

/** Tries a proposed revision, with `edit` (checked as apply checks it) in place of its lines. */
export async function tryRevision(
  svc: Services,
  agent: string,
  revisionId: string,
  edit: Pick<ApplyEdit, 'lines' | 'check'> | null,
  now: string,
): Promise<TryAnswer> {
  const rev = await svc.revisions.getRevision(agent, revisionId);
  if (!rev) throw notFound(`revision ${revisionId}`);
  if (rev.status !== 'proposed')
    throw new ApiError('conflict', `revision ${revisionId} is ${rev.status}, not proposed: there is nothing to try`);
  const agentRow = await svc.store.getAgent(agent);
  if (!agentRow) throw notFound(`agent ${agent}`);
  const settings = settingsOf(agentRow.settings);
  const [rows, unavailable] = await Promise.all([svc.store.listTools(agent), svc.upstreams.unavailable(agent)]);
  const tools = new Map(rows.map((t) => [t.name, t]));
  const row = tools.get(rev.tool);
  if (!row) throw new ApiError('conflict', `tool ${rev.tool} is no longer registered`);

  let lines = linesOf(rev);
  let edited = false;
  if (edit && isMemoryRevision(rev))
    throw new ApiError('invalid_request', 'a memory revision has no lines to edit; try it as proposed');
  if (edit) {
    const result = await editedLines({ ...edit, edited_by: '' }, rev, row, tools, settings);
    if (result) {
      lines = result;
      edited = true;
    }
  } else if (!isMemoryRevision(rev) && isEmpty(lines)) {
    throw new ApiError('invalid_request', `revision ${revisionId} keeps no line to try`);
  }
  const changed = await afterRow(svc, rev, row, lines, settings, new Set(tools.keys()), now);

  const calls = await servedCalls(svc, agent, rev.tool, settings);
  const requests = tryRequests(rev.tool, rev.evidence, calls);
  const routed = rows.filter((t) => !unavailable.has(t.name));
  const docs = await routingDocs(svc, routed);
  const before = buildRoutingIndex(docs);
  const after = buildRoutingIndex(
    docs.map((d) => (d.name === changed.name && changed.vector ? routingDoc(changed, changed.vector) : d)),
  );
  const viewsBefore = new Map(routed.map((t) => [t.name, modelView(t, settings.show_learned_examples)]));
  const viewsAfter = new Map(viewsBefore).set(changed.name, modelView(changed, settings.show_learned_examples));
  const limit = settings.stable_tool_list_tokens;
  const stable = {
    before: limit > 0 && toolboxTokens([...viewsBefore.values()]) <= limit,
    after: limit > 0 && toolboxTokens([...viewsAfter.values()]) <= limit,
  };
  const vectors = requests.length > 0 ? await svc.embedder.embed(requests.map((r) => r.request)) : [];
  const ranked = requests.map((r, i) => {
    const query = { text: r.request, vector: vectors[i] ?? new Float32Array(svc.embedder.dimensions) };
    const all = {
      before: rankTools(before, query, before.names.length),
      after: rankTools(after, query, after.names.length),
    };
    // Offered as /route offers: every tool under the stable-list rule, else its top_k.
    const offer = (index: typeof before, stable: boolean) =>
      stable ? [...index.names].sort() : rankTools(index, query, settings.top_k).map((t) => t.name);
    return {
      ...r,
      rank: { before: rankOf(all.before, r.expected), after: rankOf(all.after, r.expected) },
      offered: { before: offer(before, stable.before), after: offer(after, stable.after) },
    };
  });

  const pickTool = svc.model.pickTool?.bind(svc.model);
  const model = { id: svc.model.id, picks: false, note: null as string | null };
  if (!pickTool) {
    model.note = `the model ${svc.model.id} cannot call tools, so no pick was made; set LLM=openai:<model> to see which tool the model calls`;
    return {
      revision_id: rev.revision_id,
      tool: rev.tool,
      edited,
      lines,
      model,
      requests: ranked.map(noPick),
      test_calls: 0,
    };
  }
  if (ranked.length === 0) {
    model.note = 'no request to replay: the revision rests on none and the tool has no recent served call';
    return { revision_id: rev.revision_id, tool: rev.tool, edited, lines, model, requests: [], test_calls: 0 };
  }
  const budget = await svc.modelBudget.take(agent, ranked.length * 2, settings.model_calls_per_hour, Date.parse(now));
  const picked = Math.floor(budget.granted / 2);
  if (picked < ranked.length)
    model.note = `${ranked.length - picked} of ${ranked.length} requests were not shown to the model: ${modelBudgetReason(settings.model_calls_per_hour, budget.nextInMs)}`;
  model.picks = picked > 0;

  const endpoints = new Map<string, Promise<Endpoint | null>>();
  const endpointOf = (name: string) => {
    let found = endpoints.get(name);
    if (!found) {
      found = tools.has(name) ? testEndpointOf(svc, agent, name) : Promise.resolve(null);
      endpoints.set(name, found);
    }
    return found;
  };
  let testCalls = 0;
  const test = async (pick: ToolPick | null): Promise<TryPick> => {
    if (!pick) return { tool: null, arguments: {}, test: null };
    const endpoint = await endpointOf(pick.tool);
    if (!endpoint) return { tool: pick.tool, arguments: pick.arguments, test: null };
    testCalls += 1;
    return { tool: pick.tool, arguments: pick.arguments, test: await callTestEndpoint(endpoint, pick) };
  };
  const views = (names: string[], from: Map<string, ModelTool>) => names.flatMap((n) => from.get(n) ?? []);
  const answered = await mapPool(ranked, PICK_CONCURRENCY, async (r, i) => {
    if (i >= picked) return noPick(r);
    const [b, a] = await Promise.all([
      pickTool(r.request, views(r.offered.before, viewsBefore)),
      pickTool(r.request, views(r.offered.after, viewsAfter)),
    ]);
    return { ...r, pick: { before: await test(b), after: await test(a) } };
  });
  return {
    revision_id: rev.revision_id,
    tool: rev.tool,
    edited,
    lines,
    model,
    requests: answered,
    test_calls: testCalls,
  };
}

function noPick<T extends TryRequest>(r: T): T & { pick: null } {
  return { ...r, pick: null };
}

function rankOf(ranked: readonly { name: string; rank: number }[], name: string): number | null {
  return ranked.find((t) => t.name === name)?.rank ?? null;
}

/**
 * The row as applying these lines would leave it (the plan apply follows, before its displacement
 * re-check), re-embedded in memory when its routing text changes. Nothing is stored.
 */
async function afterRow(
  svc: Services,
  rev: Revision,
  row: StoredTool,
  lines: RevisionLines,
  settings: Settings,
  registered: ReadonlySet<string>,
  now: string,
): Promise<StoredTool> {
  const state = isMemoryRevision(rev)
    ? withMemory(row, planMemory(row, rev.memory, rev.memory.added, settings, Date.parse(now)).memory)
    : planApply(learnedState(row), { ...rev, ...lines }, settings, registered).state;
  const next: StoredTool = { ...row, ...state };
  if (embeddingText(next) !== embeddingText(row) || !row.vector) {
    const [vector] = await embedTools(svc.embedder, [next]);
    next.vector = vector ?? null;
  }
  return next;
}

/** The tool's newest calls with the request each answered (the call's own, else its turn's), newest first. */
async function servedCalls(svc: Services, agent: string, tool: string, settings: Settings): Promise<ServedCall[]> {
  const calls = (await svc.reviewLog.recentCalls(agent, [tool], settings.max_calls_per_tool)).sort(
    (a, b) => b.seq - a.seq,
  );
  const turnIds = [...new Set(calls.flatMap((c) => (c.request === null && c.turn_id !== null ? [c.turn_id] : [])))];
  const turns = new Map((await svc.reviewLog.turnsById(agent, turnIds)).map((t) => [t.turn_id, t.request]));
  return calls.map((c) => ({
    call_id: c.call_id,
    success: c.success,
    request: c.request ?? (c.turn_id === null ? null : (turns.get(c.turn_id) ?? null)),
  }));
}

// ── Test endpoints ──────────────────────────────────────────────────────────────────────

/** A test endpoint as stored on its tool's row. */
interface StoredEndpoint {
  url: string;
  token_sealed: string | null;
}

interface Endpoint {
  url: string;
  token: string | null;
}

/** The sealing context of a tool's test endpoint token: a token copied to another row does not open. */
const tokenContext = (agent: string, tool: string) => `test-endpoint:${agent}/${tool}`;

/**
 * Sets a tool's test endpoint. The address is held to the rule of upstream addresses
 * (src/core/upstream-url.ts: https to a public host unless UPSTREAMS_ALLOW_LOCAL); the token, when
 * given, is sealed with UPSTREAM_SECRET_KEY like upstream header values.
 */
export async function setTestEndpoint(
  svc: Services,
  agent: string,
  tool: string,
  body: { url: string; token?: string | undefined },
): Promise<{ tool: string; url: string; token: boolean }> {
  const address = checkUpstreamUrl(body.url, { allowPrivate: svc.allowLocalUpstreams, label: 'test endpoint' });
  if (!address.ok) {
    const hint = address.reason === 'metadata_address' ? '' : ' (local development: UPSTREAMS_ALLOW_LOCAL=true)';
    throw new ApiError('invalid_request', `${address.message}${hint}`);
  }
  let token_sealed: string | null = null;
  if (body.token !== undefined) {
    if (!svc.secretBox)
      throw new ApiError('invalid_request', 'a test endpoint token is stored sealed: set UPSTREAM_SECRET_KEY first');
    token_sealed = await svc.secretBox.seal(body.token, tokenContext(agent, tool));
  }
  const stored: StoredEndpoint = { url: address.url, token_sealed };
  if (!(await svc.store.setTestEndpoint(agent, tool, JSON.stringify(stored)))) throw notFound(`tool ${tool}`);
  return { tool, url: address.url, token: token_sealed !== null };
}

/** The tool's test endpoint (token never answered), or 404. */
export async function getTestEndpoint(
  svc: Services,
  agent: string,
  tool: string,
): Promise<{ tool: string; url: string; token: boolean }> {
  const raw = await svc.store.getTestEndpoint(agent, tool);
  if (raw === null) throw notFound(`test endpoint of tool ${tool}`);
  const stored = JSON.parse(raw) as StoredEndpoint;
  return { tool, url: stored.url, token: stored.token_sealed !== null };
}

/** Removes the tool's test endpoint; 404 when the tool has none. */
export async function deleteTestEndpoint(svc: Services, agent: string, tool: string): Promise<void> {
  if ((await svc.store.getTestEndpoint(agent, tool)) === null) throw notFound(`test endpoint of tool ${tool}`);
  await svc.store.setTestEndpoint(agent, tool, null);
}

/** A tool's test endpoint with its token opened (a token that no longer opens is not sent), or null. */
async function testEndpointOf(svc: Services, agent: string, tool: string): Promise<Endpoint | null> {
  const raw = await svc.store.getTestEndpoint(agent, tool);
  if (raw === null) return null;
  const stored = JSON.parse(raw) as StoredEndpoint;
  let token: string | null = null;
  if (stored.token_sealed !== null && svc.secretBox)
    token = await svc.secretBox.open(stored.token_sealed, tokenContext(agent, tool)).catch(() => null);
  return { url: stored.url, token };
}

/** Sends one pick to a test endpoint: `{result}` as answered, or `{error}` saying what went wrong. */
async function callTestEndpoint(endpoint: Endpoint, pick: ToolPick): Promise<{ result?: unknown; error?: string }> {
  try {
    const res = await fetch(endpoint.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(endpoint.token ? { authorization: `Bearer ${endpoint.token}` } : {}),
      },
      body: JSON.stringify({ tool: pick.tool, arguments: pick.arguments }),
      signal: AbortSignal.timeout(TEST_TIMEOUT_MS),
      redirect: 'manual',
    });
    const text = await res.text();
    if (text.length > TEST_ANSWER_BYTES) return { error: `the answer is longer than ${TEST_ANSWER_BYTES} bytes` };
    return testEndpointResult(res.status, text);
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}
