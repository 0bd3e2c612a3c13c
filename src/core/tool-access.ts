/**
 * Which tools a key may use through the agent's MCP endpoint (docs/integrations.md "Who may call
 * what"). A key's `tool_access` lists tool names and whole upstreams (`upstream:<name>`): a tool on
 * the deny list, or served by a denied upstream, is refused; with an allow list, only what it names
 * is allowed. Deny wins over allow. No `tool_access` (and the admin token) allows every tool.
 */

/** A key's lists, as stored with the key. */
export interface ToolAccess {
  allow?: readonly string[] | undefined;
  deny?: readonly string[] | undefined;
}

/** The list entry that names every tool of one upstream. */
export const UPSTREAM_ENTRY = 'upstream:';

/** Whether `tool` (served by `upstream`, or null for the agent's own tools) may be used. */
export function toolAllowed(access: ToolAccess | null, tool: string, upstream: string | null): boolean {
  if (access === null) return true;
  const names = upstream === null ? [tool] : [tool, `${UPSTREAM_ENTRY}${upstream}`];
  if (access.deny?.some((entry) => names.includes(entry))) return false;
  if (access.allow === undefined) return true;
  return access.allow.some((entry) => names.includes(entry));
}
