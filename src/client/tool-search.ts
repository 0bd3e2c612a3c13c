/**
 * Whetstone as the tool search of an Anthropic Messages or OpenAI Responses agent
 * (docs/tool-delivery.md): the tool list stays stable and deferred, so the prompt prefix caches; the
 * model calls the search tool, the helper answers with `/route`'s tools in the provider's reference
 * format (recording the turn), and reports the calls the model then makes to `/calls`.
 * Plain fetch through the Whetstone client; no provider SDK.
 */
import type { Call, RecordCallsAnswer, RouteInput, RouteResult } from './types.ts';

export const SEARCH_TOOL_NAME = 'tool_search';
const SEARCH_DESCRIPTION =
  'Search the available tools for the ones that can serve a request. Describe what the user wants in plain words; the matching tools are loaded so you can call them.';
const SEARCH_PARAMETERS = {
  type: 'object',
  properties: { query: { type: 'string', description: 'What the user wants done, in plain words.' } },
  required: ['query'],
};

/** A call the model made, as the application ran it. */
export interface ReportedCall {
  id?: string;
  tool: string;
  arguments?: Record<string, unknown>;
  success: boolean;
  error?: string;
}

/**
 * What the tool search uses of Whetstone: the `WhetstoneClient` of `createClient` is one, and
 * anything else that answers these three the same way.
 */
export interface SearchWhetstone {
  route(input: RouteInput): Promise<RouteResult>;
  recordCalls(calls: Call[]): Promise<RecordCallsAnswer>;
  modelTools(format: 'openai' | 'anthropic', defer: boolean): Promise<{ tools: Record<string, unknown>[] }>;
}

interface Shared {
  whetstone: SearchWhetstone;
  /** How many tools one search loads (`/route`'s k). */
  k?: number;
  conversationId?: string;
}

function queryOf(input: unknown): string {
  const q = (input as { query?: unknown } | null)?.query;
  if (typeof q !== 'string' || q.trim() === '') throw new Error('tool search: the model sent no query');
  return q;
}

/** Routes the model's search query, with the helper's k and conversation. */
function routeSearch(shared: Shared, request: string): Promise<RouteResult> {
  return shared.whetstone.route({
    request,
    ...(shared.k !== undefined ? { k: shared.k } : {}),
    ...(shared.conversationId !== undefined ? { conversation_id: shared.conversationId } : {}),
  });
}

/** Records the calls of the last routed turn (success and error). */
async function report(
  shared: Shared,
  turnId: string | null,
  request: string | null,
  calls: readonly ReportedCall[],
): Promise<void> {
  if (calls.length === 0) return;
  await shared.whetstone.recordCalls(
    calls.map((c) => ({
      ...(c.id !== undefined ? { id: c.id } : {}),
      tool: c.tool,
      arguments: c.arguments ?? {},
      success: c.success,
      ...(c.error !== undefined ? { error: c.error } : {}),
      ...(turnId !== null ? { turn_id: turnId } : request !== null ? { request } : {}),
      ...(shared.conversationId !== undefined ? { conversation_id: shared.conversationId } : {}),
    })),
  );
}

/** Anthropic Messages: `tools` with `defer_loading`, a custom search answered with `tool_reference` blocks. */
export function anthropicToolSearch(shared: Shared) {
  let turnId: string | null = null;
  let request: string | null = null;
  return {
    /** The stable list: every registered tool (sorted, deferred but pinned ones) then the search tool. */
    async tools(): Promise<Record<string, unknown>[]> {
      const { tools } = await shared.whetstone.modelTools('anthropic', true);
      return [...tools, { name: SEARCH_TOOL_NAME, description: SEARCH_DESCRIPTION, input_schema: SEARCH_PARAMETERS }];
    },
    /** Answers a `tool_use` block of the search tool with a `tool_result` of `tool_reference` blocks. */
    async answer(block: { id: string; input: unknown }) {
      request = queryOf(block.input);
      const routed = await routeSearch(shared, request);
      turnId = routed.turn_id;
      return {
        type: 'tool_result' as const,
        tool_use_id: block.id,
        content: routed.tools.map((t) => ({ type: 'tool_reference' as const, tool_name: t.name })),
      };
    },
    /** Reports the calls the model made after the last search, tied to its turn. */
    report: (calls: readonly ReportedCall[]) => report(shared, turnId, request, calls),
    get turnId() {
      return turnId;
    },
  };
}

/** OpenAI Responses: functions with `defer_loading`, a client-executed `tool_search` answered with `tool_search_output`. */
export function responsesToolSearch(shared: Shared) {
  let turnId: string | null = null;
  let request: string | null = null;
  const flat = (t: Record<string, unknown>) => {
    const f = t.function as { name: string; description: string; parameters: Record<string, unknown> };
    return {
      type: 'function',
      name: f.name,
      description: f.description,
      parameters: f.parameters,
      ...(t.defer_loading ? { defer_loading: true } : {}),
    };
  };
  return {
    /** The stable list: the client-executed search tool, then every function (sorted, deferred but pinned ones). */
    async tools(): Promise<Record<string, unknown>[]> {
      const { tools } = await shared.whetstone.modelTools('openai', true);
      return [
        { type: 'tool_search', execution: 'client', description: SEARCH_DESCRIPTION, parameters: SEARCH_PARAMETERS },
        ...tools.map(flat),
      ];
    },
    /** Answers a `tool_search_call` output item with the `tool_search_output` input item that loads the routed functions. */
    async answer(item: { call_id: string; arguments: unknown }) {
      const args = typeof item.arguments === 'string' ? (JSON.parse(item.arguments) as unknown) : item.arguments;
      request = queryOf(args);
      const routed = await routeSearch(shared, request);
      turnId = routed.turn_id;
      return {
        type: 'tool_search_output' as const,
        call_id: item.call_id,
        execution: 'client' as const,
        tools: routed.model_tools.map((t) => ({ ...flat(t as Record<string, unknown>), defer_loading: true })),
      };
    },
    report: (calls: readonly ReportedCall[]) => report(shared, turnId, request, calls),
    get turnId() {
      return turnId;
    },
  };
}
