/**
 * The shapes of the API answers the dashboard reads: all of the client package's types, each derived
 * from the zod schema the Worker validates and documents it with (src/schemas.ts), so none is
 * written twice. Type-only: nothing of this reaches the browser bundle.
 */
export type * from '../../client/types.ts';
import type { Upstream, WhoAmI } from '../../client/types.ts';

/** What each view gets from main.ts: the agent, a way to re-render itself and to open another tab. */
export interface ViewContext {
  agent: string;
  /** Who the token is on this agent (`GET …/whoami`): the views show only the actions its rights allow. */
  who: WhoAmI;
  reload: () => Promise<void>;
  open: (tab: string) => Promise<void>;
}

/** `GET …/upstreams/:name`: an upstream MCP server as the gateway answers it. */
export type UpstreamView = Upstream;
