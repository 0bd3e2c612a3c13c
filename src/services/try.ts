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
import { buildRoutingIndex, embeddingText, rankTools, routingDoc, type RoutingIndex } from '../core/routing.ts';
import { testEndpointResult, tryRequests, type ServedCall, type TryRequest } from '../core/try-run.ts';
import { checkUpstreamUrl } from '../core/upstream-url.ts';
import type { Services } from '../env.ts';
import { ApiError, notFound } from '../errors.ts';
import type { ModelTool, Revision, Settings, TryAnswer, TryPick } from '../schemas.ts';
import { editedLines, type ApplyEdit } from './apply.ts';
import { modelBudgetReason } from './model-budget.ts';
import { isMemoryRevision, planMemory, withMemory } from './memory.ts';
import { routingDocs, settingsOf } from './route-serving.ts';
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
  const { rev, row, rows, settings, unavailable } = await loadRevision(svc, agent, revisionId);
  const tools = new Map(rows.map((t) => [t.name, t]));
  const { lines, edited } = await linesToTry(rev, row, tools, settings, edit);
  const changed = await afterRow(svc, rev, row, lines, settings, new Set(tools.keys()), now);
  const requests = tryRequests(rev.tool, rev.evidence, await servedCalls(svc, agent, rev.tool, settings));
  const box = await toolboxes(
    svc,
    rows.filter((t) => !unavailable.has(t.name)),
    changed,
    settings,
  );
  const ranked = await rankRequests(svc, box, requests, settings);
  const answer = { revision_id: rev.revision_id, tool: rev.tool, edited, lines, test_calls: 0 };
  return withPicks(svc, agent, { ...answer, requests: ranked }, box, settings, now);
}

/** The proposed revision, its tool's row, every row of the agent, its settings and unavailable tools. */
async function loadRevision(svc: Services, agent: string, revisionId: string) {
  const rev = await svc.revisions.getRevision(agent, revisionId);
  if (!rev) throw notFound(`revision ${revisionId}`);
  if (rev.status !== 'proposed')
    throw new ApiError('conflict', `revision ${revisionId} is ${rev.status}, not proposed: there is nothing to try`);
  const agentRow = await svc.store.getAgent(agent);
  if (!agentRow) throw notFound(`agent ${agent}`);
  const [rows, unavailable] = await Promise.all([svc.store.listTools(agent), svc.upstreams.unavailable(agent)]);
  const row = rows.find((t) => t.name === rev.tool);
  if (!row) throw new ApiError('conflict', `tool ${rev.tool} is no longer registered`);
  return { rev, row, rows, settings: settingsOf(agentRow.settings), unavailable };
}

/** The lines to try: the edit's, checked as apply checks them (a refused line is the same 400), or the proposal's. */
async function linesToTry(
  rev: Revision,
  row: StoredTool,
  tools: ReadonlyMap<string, StoredTool>,
  settings: Settings,
  edit: Pick<ApplyEdit, 'lines' | 'check'> | null,
): Promise<{ lines: RevisionLines; edited: boolean }> {
  if (edit && isMemoryRevision(rev))
    throw new ApiError('invalid_request', 'a memory revision has no lines to edit; try it as proposed');
  const proposed = linesOf(rev);
  if (!edit) {
    if (!isMemoryRevision(rev) && isEmpty(proposed))
      throw new ApiError('invalid_request', `revision ${rev.revision_id} keeps no line to try`);
    return { lines: proposed, edited: false };
  }
  const lines = await editedLines({ ...edit, edited_by: '' }, rev, row, tools, settings);
  return lines ? { lines, edited: true } : { lines: proposed, edited: false };
}

/** Routing and the model views as they are (`before`) and with the changed row (`after`). */
interface Toolbox {
  index: RoutingIndex;
  views: Map<string, ModelTool>;
  /** The stable-list rule holds: /route offers every tool. */
  stable: boolean;
}

async function toolboxes(
  svc: Services,
  routed: readonly StoredTool[],
  changed: StoredTool,
  settings: Settings,
): Promise<{ before: Toolbox; after: Toolbox }> {
  const docs = await routingDocs(svc, routed);
  const views = new Map(routed.map((t) => [t.name, modelView(t, settings.show_learned_examples)]));
  const changedViews = new Map(views).set(changed.name, modelView(changed, settings.show_learned_examples));
  const limit = settings.stable_tool_list_tokens;
  const stable = (v: Map<string, ModelTool>) => limit > 0 && toolboxTokens([...v.values()]) <= limit;
  const changedDocs = docs.map((d) =>
    d.name === changed.name && changed.vector ? routingDoc(changed, changed.vector) : d,
  );
  return {
    before: { index: buildRoutingIndex(docs), views, stable: stable(views) },
    after: { index: buildRoutingIndex(changedDocs), views: changedViews, stable: stable(changedViews) },
  };
}

type Ranked = TryRequest & Pick<TryAnswer['requests'][number], 'rank' | 'offered'>;

/** Each request's rank of its expected tool over the whole toolbox, and the tools offered, before and after. */
async function rankRequests(
  svc: Services,
  box: { before: Toolbox; after: Toolbox },
  requests: readonly TryRequest[],
  settings: Settings,
): Promise<Ranked[]> {
  const vectors = requests.length > 0 ? await svc.embedder.embed(requests.map((r) => r.request)) : [];
  return requests.map((r, i) => {
    const query = { text: r.request, vector: vectors[i] ?? new Float32Array(svc.embedder.dimensions) };
    const rank = (b: Toolbox) =>
      rankTools(b.index, query, b.index.names.length).find((t) => t.name === r.expected)?.rank ?? null;
    // Offered as /route offers: every tool under the stable-list rule, else its top_k.
    const offer = (b: Toolbox) =>
      b.stable ? [...b.index.names].sort() : rankTools(b.index, query, settings.top_k).map((t) => t.name);
    return {
      ...r,
      rank: { before: rank(box.before), after: rank(box.after) },
      offered: { before: offer(box.before), after: offer(box.after) },
    };
  });
}

/**
 * The model's picks from the offered views, before and after, as far as the agent's hour of model
 * calls allows (two a request); each pick of a tool with a test endpoint is sent there.
 */
async function withPicks(
  svc: Services,
  agent: string,
  answer: Omit<TryAnswer, 'requests' | 'model'> & { requests: Ranked[] },
  box: { before: Toolbox; after: Toolbox },
  settings: Settings,
  now: string,
): Promise<TryAnswer> {
  const pickTool = svc.model.pickTool?.bind(svc.model);
  const model = { id: svc.model.id, picks: false, note: null as string | null };
  const unpicked = { ...answer, model, requests: answer.requests.map(noPick) };
  if (!pickTool) {
    model.note = `the model ${svc.model.id} cannot call tools, so no pick was made; set LLM=openai:<model> to see which tool the model calls`;
    return unpicked;
  }
  if (answer.requests.length === 0) {
    model.note = 'no request to replay: the revision rests on none and the tool has no recent served call';
    return unpicked;
  }
  const n = answer.requests.length;
  const budget = await svc.modelBudget.take(agent, n * 2, settings.model_calls_per_hour, Date.parse(now));
  const picked = Math.floor(budget.granted / 2);
  if (picked < n)
    model.note = `${n - picked} of ${n} requests were not shown to the model: ${modelBudgetReason(settings.model_calls_per_hour, budget.nextInMs)}`;
  model.picks = picked > 0;
  const tester = testerOf(svc, agent, new Set(box.before.views.keys()));
  const views = (names: string[], b: Toolbox) => names.flatMap((name) => b.views.get(name) ?? []);
  const requests = await mapPool(answer.requests, PICK_CONCURRENCY, async (r, i) => {
    if (i >= picked) return noPick(r);
    const [before, after] = await Promise.all([
      pickTool(r.request, views(r.offered.before, box.before)),
      pickTool(r.request, views(r.offered.after, box.after)),
    ]);
    return { ...r, pick: { before: await tester.test(before), after: await tester.test(after) } };
  });
  return { ...answer, model, requests, test_calls: tester.calls() };
}

/** Sends picks to their tool's test endpoint (each endpoint read once), counting the calls. */
function testerOf(svc: Services, agent: string, registered: ReadonlySet<string>) {
  const endpoints = new Map<string, Promise<Endpoint | null>>();
  let calls = 0;
  const endpointOf = (name: string): Promise<Endpoint | null> => {
    let found = endpoints.get(name);
    if (!found) {
      found = registered.has(name) ? testEndpointOf(svc, agent, name) : Promise.resolve(null);
      endpoints.set(name, found);
    }
    return found;
  };
  return {
    calls: () => calls,
    async test(pick: ToolPick | null): Promise<TryPick> {
      if (!pick) return { tool: null, arguments: {}, test: null };
      const endpoint = await endpointOf(pick.tool);
      if (!endpoint) return { tool: pick.tool, arguments: pick.arguments, test: null };
      calls += 1;
      return { tool: pick.tool, arguments: pick.arguments, test: await callTestEndpoint(endpoint, pick) };
    },
  };
}

function noPick<T extends TryRequest>(r: T): T & { pick: null } {
  return { ...r, pick: null };
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
    ? withMemory(row, planMemory(row, rev.memory, rev.memory.added, settings, Date.parse(now), registered.size).memory)
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
