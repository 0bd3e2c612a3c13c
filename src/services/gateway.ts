/**
 * The gateway side of the agent's MCP endpoint (docs/integrations.md "Whetstone as an MCP gateway"):
 * the tools a key sees listed, and a `tools/call` of an upstream tool forwarded to its upstream. The
 * result goes back exactly as the upstream answered; after the answer the call is logged on the
 * session's last `search_tools` turn (its request, arguments, success, the error text of a failure),
 * so the log is complete without the agent reporting anything. A call is never retried: one that
 * timed out may have reached the upstream.
 */
import { UpstreamError } from '../adapters/mcp-upstream.ts';
import type { SessionTurn } from '../core/ports.ts';
import { instructionsInResult } from '../core/result-check.ts';
import { type ToolAccess, toolAllowed } from '../core/tool-access.ts';
import type { Services } from '../env.ts';
import { logError, logInfo } from '../logger.ts';
import { LIMITS, type ModelTool } from '../schemas.ts';
import { recordCalls } from './calls.ts';
import { routingSnapshot } from './route-serving.ts';
import { forwardCall } from './upstream-sync.ts';

/** Who is calling, through which MCP session. */
export interface GatewayCaller {
  agent: string;
  /** The key's tool lists; null = every tool (no lists, or the admin token). */
  access: ToolAccess | null;
  /** The MCP session (`Mcp-Session-Id`), or a stand-in per key for a client that keeps none. */
  sessionId: string;
  waitUntil: (p: Promise<unknown>) => void;
}

/** Why a forwarded call did not get an upstream's answer. */
export type ForwardFailure =
  | { reason: 'denied'; message: string }
  | { reason: 'unknown'; message: string }
  | { reason: 'unavailable'; message: string }
  | { reason: 'quarantined'; message: string }
  | { reason: 'upstream'; message: string; error: UpstreamError };

export type ForwardOutcome = { ok: true; result: Record<string, unknown> } | ({ ok: false } & ForwardFailure);

/** An MCP tool as `tools/list` answers it. */
export interface ListedMcpTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/**
 * The pinned tools the caller may call through the gateway, with their model views (learned lines
 * included): upstream tools still served. The agent's own tools are not listed: the gateway cannot
 * call them.
 */
export async function listedTools(svc: Services, caller: GatewayCaller): Promise<ListedMcpTool[]> {
  const [pins, served] = await Promise.all([svc.pins.pinned(caller.agent), svc.upstreams.tools(caller.agent)]);
  const callable = served.filter(
    (s) => s.available && pins.has(s.tool) && toolAllowed(caller.access, s.tool, s.upstream),
  );
  if (callable.length === 0) return [];
  const snap = await routingSnapshot(svc, caller.agent, caller.waitUntil);
  return callable.flatMap((s) => {
    const view = snap.views.get(s.tool);
    return view ? [mcpTool(view)] : [];
  });
}

function mcpTool(view: ModelTool): ListedMcpTool {
  return {
    name: view.function.name,
    description: view.function.description ?? '',
    inputSchema: view.function.parameters ?? { type: 'object' },
  };
}

/** Keeps what `search_tools` answers to the tools the caller may use. */
export async function allowedRouted<T extends { name: string }>(
  svc: Services,
  caller: GatewayCaller,
  tools: readonly T[],
): Promise<T[]> {
  if (caller.access === null) return [...tools];
  const upstreamOf = new Map((await svc.upstreams.tools(caller.agent)).map((s) => [s.tool, s.upstream]));
  return tools.filter((t) => toolAllowed(caller.access, t.name, upstreamOf.get(t.name) ?? null));
}

/**
 * Remembers the session's turn before search_tools answers (one D1 write), so a call the model makes
 * right after the answer is logged on it. A failed write is logged; the search still answers.
 */
export async function rememberTurn(svc: Services, caller: GatewayCaller, turn: SessionTurn, now: string) {
  try {
    await svc.upstreams.setSessionTurn(caller.agent, caller.sessionId, turn, now);
  } catch (err) {
    logError('gateway_session_not_saved', { agent: caller.agent, error: String(err) });
  }
}

/** Forwards `tools/call` of `tool` to its upstream and logs the call after the answer. */
export async function forwardToolCall(
  svc: Services,
  caller: GatewayCaller,
  tool: string,
  args: Record<string, unknown>,
): Promise<ForwardOutcome> {
  const served = await svc.upstreams.tool(caller.agent, tool);
  if (!toolAllowed(caller.access, tool, served?.upstream ?? null)) {
    const message = `tool ${tool} is not allowed for this key`;
    logCall(svc, caller, { tool, args, success: false, error: `denied: ${message}`, latencyMs: 0, upstream: null });
    return { ok: false, reason: 'denied', message };
  }
  if (!served?.available) {
    const held = await svc.upstreams.heldNamed(caller.agent, tool);
    if (held) {
      // The check and where it fired, never the text: the model reads this error.
      const fired = [
        ...new Set(held.findings.filter((f) => f.severity === 'quarantine').map((f) => `${f.check} in ${f.field}`)),
      ];
      const why = fired.length > 0 ? ` (${fired.join('; ')})` : '';
      return {
        ok: false,
        reason: 'quarantined',
        message: `tool ${tool} of upstream ${held.upstream} is quarantined: its definition failed the definition check${why}; a person releases it with POST /v1/agents/${caller.agent}/upstreams/${held.upstream}/tools/{tool}/release`,
      };
    }
  }
  if (!served)
    return {
      ok: false,
      reason: 'unknown',
      message: `tool ${tool} is not served by an upstream of this agent: call it yourself and report it with report_tool_call`,
    };
  const upstream = served.available ? await svc.upstreams.get(caller.agent, served.upstream) : null;
  if (!upstream)
    return {
      ok: false,
      reason: 'unavailable',
      message: `tool ${tool} is no longer served by upstream ${served.upstream}`,
    };
  const started = Date.now();
  try {
    const result = await forwardCall(svc, upstream, served.remote_name, args);
    const failed = result.isError === true;
    const error = failed ? errorText(result) : null;
    const latencyMs = Date.now() - started;
    logCall(svc, caller, { tool, args, success: !failed, error, latencyMs, upstream: upstream.name });
    caller.waitUntil(checkResult(caller.agent, tool, upstream.name, result));
    return { ok: true, result };
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    const latencyMs = Date.now() - started;
    logCall(svc, caller, { tool, args, success: false, error: err.message, latencyMs, upstream: upstream.name });
    return { ok: false, reason: 'upstream', message: err.message, error: err };
  }
}

/** The text of a failed result, as the model read it. */
function errorText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as { type?: unknown; text?: unknown }[]) : [];
  const text = content
    .flatMap((c) => (c.type === 'text' && typeof c.text === 'string' ? [c.text] : []))
    .join('\n')
    .trim();
  return (text || 'the tool answered isError without text').slice(0, LIMITS.errorChars);
}

interface LoggedCall {
  tool: string;
  args: Record<string, unknown>;
  success: boolean;
  error: string | null;
  latencyMs: number;
  upstream: string | null;
}

/** The call in the agent's log, on the session's last search turn, after the answer is sent. */
function logCall(svc: Services, caller: GatewayCaller, call: LoggedCall): void {
  const now = new Date().toISOString();
  caller.waitUntil(
    (async () => {
      const turn = await svc.upstreams.sessionTurn(caller.agent, caller.sessionId);
      await recordCalls(
        svc,
        caller.agent,
        [
          {
            tool: call.tool,
            arguments: loggedArguments(call.args),
            success: call.success,
            error: call.error?.slice(0, LIMITS.errorChars) ?? null,
            request: turn?.request ?? null,
            turn_id: turn?.turn_id ?? null,
            conversation_id: turn?.conversation_id ?? null,
          },
        ],
        now,
      );
      // Never the arguments or the result: they may hold what the user typed.
      logInfo('gateway_call', {
        agent: caller.agent,
        tool: call.tool,
        upstream: call.upstream,
        success: call.success,
        latency_ms: call.latencyMs,
      });
    })().catch((err: unknown) => {
      logError('gateway_call_not_logged', { agent: caller.agent, tool: call.tool, error: String(err) });
    }),
  );
}

/**
 * The arguments as logged: a reported call's arguments are at most LIMITS.argumentBytes (every review
 * reads them); a forwarded call's larger ones still reach the upstream but are logged as a marker.
 */
function loggedArguments(args: Record<string, unknown>): Record<string, unknown> {
  const bytes = new TextEncoder().encode(JSON.stringify(args)).byteLength;
  return bytes <= LIMITS.argumentBytes ? args : { _omitted: `arguments of ${bytes} bytes, over the log's limit` };
}

/** A result that carries text aimed at the model is flagged in the log (it is returned unchanged). */
async function checkResult(agent: string, tool: string, upstream: string, result: unknown): Promise<void> {
  const finding = instructionsInResult(result);
  if (finding) logInfo('gateway_result_flagged', { agent, tool, upstream, field: finding.field, why: finding.why });
}
