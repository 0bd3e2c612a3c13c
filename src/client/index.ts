/**
 * `whetstone/client`: a typed client of the v1 HTTP API (docs/api.md) for one agent. Every method sends
 * one request and resolves to the answer body documented in docs/api.md; any non-2xx answer rejects with a
 * `WhetstoneError` carrying the error shape of docs/api.md. No runtime dependency: it needs only `fetch`.
 */
import type {
  ApplyInput,
  Call,
  DismissInput,
  ErrorBody,
  FlagsAnswer,
  QualityAnswer,
  QualityQuery,
  OutcomeInput,
  RecordCallsAnswer,
  RegisterToolsAnswer,
  Review,
  ReviewInput,
  Revision,
  RevisionsAnswer,
  RevisionsQuery,
  RouteInput,
  RouteResult,
  Settings,
  SettingsPatch,
  ToolDef,
  TestEndpoint,
  TestEndpointInput,
  ToolRow,
  TraceAnswer,
  TraceInput,
  TryAnswer,
  TryInput,
  UnregisteredAnswer,
  WhoAmI,
} from './types.ts';

export type * from './types.ts';
export { withWhetstone } from './openai-loop.ts';
export {
  SEARCH_TOOL_NAME,
  anthropicToolSearch,
  responsesToolSearch,
  type ReportedCall,
  type SearchWhetstone,
} from './tool-search.ts';
export type {
  ChatClient,
  ChatCompletionLike,
  ChatMessage,
  ChatRequest,
  ExecutedCall,
  LoopOptions,
  LoopRun,
  LoopWhetstone,
  ToolCallLike,
  ToolHandler,
  WhetstoneLoop,
} from './openai-loop.ts';

/** Any fetch that takes a Request: the global one, a Worker's `exports.default.fetch`, a service binding. */
export type FetchLike = (request: Request) => Promise<Response>;

export interface ClientOptions {
  /** Base URL of the Worker, e.g. `http://localhost:8787`. */
  url: string;
  /** ADMIN_TOKEN or an agent key (`wsk_…`). */
  token: string;
  /** The agent id every method acts for. */
  agent: string;
  fetch?: FetchLike;
}

/** A refused request: the HTTP status and the docs/api.md error body (`code`, `message`, `details`). */
export class WhetstoneError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown[];

  constructor(status: number, code: string, message: string, details: unknown[] = []) {
    super(message);
    this.name = 'WhetstoneError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** Creates a client bound to one agent. */
export function createClient(options: ClientOptions) {
  const send = transport(options);
  const agentPath = `/v1/agents/${encodeURIComponent(options.agent)}`;
  const toolPath = (tool: string) => `${agentPath}/tools/${encodeURIComponent(tool)}`;
  const revisionPath = (id: string) => `${agentPath}/revisions/${encodeURIComponent(id)}`;
  return {
    agent: options.agent,
    /** `PUT …/tools`: registers (or re-registers) tools; identical definitions are no-ops. */
    registerTools: (tools: ToolDef[], opts: { augment?: boolean } = {}) =>
      send<RegisterToolsAnswer>('PUT', `${agentPath}/tools`, { tools, ...opts }),
    /** `GET …/tools`: every tool row with its model view. */
    tools: () => send<{ tools: ToolRow[] }>('GET', `${agentPath}/tools`),
    /** `GET …/tools?format=…&defer=…`: the whole list as the model sees it, sorted by name, byte-stable. */
    modelTools: (format: 'openai' | 'anthropic' | 'mcp', defer = false) =>
      send<{ tools: Record<string, unknown>[] }>('GET', `${agentPath}/tools?format=${format}&defer=${defer}`),
    /** `GET …/tools/:tool`: one tool row. */
    tool: (name: string) => send<ToolRow>('GET', toolPath(name)),
    /** `POST …/route`: the tools to offer the model for one request (a string is `{request}`). */
    route: (input: RouteInput | string) =>
      send<RouteResult>('POST', `${agentPath}/route`, typeof input === 'string' ? { request: input } : input),
    /** `POST …/calls`: reports calls; idempotent by call `id`. */
    recordCalls: (calls: Call[]) => send<RecordCallsAnswer>('POST', `${agentPath}/calls`, { calls }),
    /** `POST …/traces`: reports a whole OpenAI or Anthropic message list. */
    recordTrace: (trace: TraceInput) => send<TraceAnswer>('POST', `${agentPath}/traces`, trace),
    /** `POST …/outcomes`: says whether a turn was served, and by which tool. */
    outcome: (input: OutcomeInput) => send<null>('POST', `${agentPath}/outcomes`, input).then(() => undefined),
    /** `POST …/reviews`: reads the log and proposes revisions (`dry_run` stores nothing). */
    review: (input: ReviewInput = {}) => send<Review>('POST', `${agentPath}/reviews`, input),
    /** `GET …/revisions`: newest first, optionally by tool and status. */
    revisions: (query: RevisionsQuery = {}) =>
      send<RevisionsAnswer>('GET', `${agentPath}/revisions${queryString(query)}`),
    /** `GET …/revisions/:id`. */
    revision: (id: string) => send<Revision>('GET', revisionPath(id)),
    /** `POST …/revisions/:id/apply`. */
    apply: (id: string, input: ApplyInput) => send<Revision>('POST', `${revisionPath(id)}/apply`, input),
    /**
     * `POST …/revisions/:id/try`: replays the requests a proposed revision rests on and the tool's
     * recent served requests, before and after its lines (or `input.edit`): ranks, and the model's
     * picks when the model can call tools. Writes nothing.
     */
    tryRevision: (id: string, input: TryInput = {}) => send<TryAnswer>('POST', `${revisionPath(id)}/try`, input),
    /** `PUT …/tools/:tool/test-endpoint`: the address only a try run sends picks of the tool to. */
    setTestEndpoint: (tool: string, input: TestEndpointInput) =>
      send<TestEndpoint>('PUT', `${toolPath(tool)}/test-endpoint`, input),
    /** `DELETE …/tools/:tool/test-endpoint`. */
    deleteTestEndpoint: (tool: string) => send<null>('DELETE', `${toolPath(tool)}/test-endpoint`).then(() => undefined),
    /** `GET …/whoami`: the token's role on the agent and the rights it meets there. */
    whoami: () => send<WhoAmI>('GET', `${agentPath}/whoami`),
    /** `POST …/revisions/:id/dismiss`. */
    dismiss: (id: string, input: DismissInput) => send<Revision>('POST', `${revisionPath(id)}/dismiss`, input),
    /** `POST …/tools/:tool/undo`: takes back the tool's newest applied revision. */
    undo: (tool: string, input: ApplyInput) => send<Revision>('POST', `${toolPath(tool)}/undo`, input),
    /** `GET …/flags`: usage flags (docs/learning.md). */
    flags: () => send<FlagsAnswer>('GET', `${agentPath}/flags`),
    /** `GET …/quality`: hit rate per UTC day and what each applied revision changed. */
    quality: (query: QualityQuery = {}) => send<QualityAnswer>('GET', `${agentPath}/quality${queryString(query)}`),
    /** `GET …/unregistered`: names seen in calls or traces that are not registered. */
    unregistered: () => send<UnregisteredAnswer>('GET', `${agentPath}/unregistered`),
    /** `GET …/config`: the settings in force (docs/configuration.md). */
    config: () => send<Settings>('GET', `${agentPath}/config`),
    /** `PUT …/config`: changes some settings; the answer is every setting now in force. */
    setConfig: (patch: SettingsPatch) => send<Settings>('PUT', `${agentPath}/config`, patch),
  };
}

/** The client `createClient` returns. */
export type WhetstoneClient = ReturnType<typeof createClient>;

type Send = <T>(method: string, path: string, body?: unknown) => Promise<T>;

function transport(options: ClientOptions): Send {
  const base = options.url.replace(/\/+$/, '');
  const doFetch: FetchLike = options.fetch ?? ((request) => fetch(request));
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await doFetch(new Request(`${base}${path}`, init));
    const text = await res.text();
    if (!res.ok) throw errorOf(res.status, text);
    return (text ? JSON.parse(text) : null) as T;
  };
}

/** The docs/api.md error body when the answer has one; else the status and the first of the text. */
function errorOf(status: number, text: string): WhetstoneError {
  const parsed = parseJson(text) as Partial<ErrorBody> | undefined;
  const e = parsed?.error;
  if (e && typeof e.code === 'string' && typeof e.message === 'string') {
    return new WhetstoneError(status, e.code, e.message, Array.isArray(e.details) ? e.details : []);
  }
  return new WhetstoneError(status, `http_${status}`, text.slice(0, 200) || `HTTP ${status}`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function queryString(query: RevisionsQuery & QualityQuery): string {
  const params = new URLSearchParams();
  if (query.days !== undefined) params.set('days', String(query.days));
  if (query.tool !== undefined) params.set('tool', query.tool);
  if (query.status !== undefined) params.set('status', query.status);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.cursor !== undefined) params.set('cursor', query.cursor);
  const s = params.toString();
  return s ? `?${s}` : '';
}
