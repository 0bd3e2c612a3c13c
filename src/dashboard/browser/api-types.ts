/**
 * The shapes of the API answers the dashboard reads: the client package's types (derived from the
 * same zod schemas the Worker validates with), plus the few answers the client has no method for.
 * Type-only: nothing of this reaches the browser bundle.
 */
export type {
  BulkAnswer,
  FlagsAnswer,
  QualityAnswer,
  Review,
  Revision,
  Settings,
  ToolRow,
  ToolVersion,
  TryAnswer,
  UnregisteredAnswer,
  UnregisteredTool,
  WhoAmI,
} from '../../client/types.ts';
import type { ModelTool, Revision, Upstream, WhoAmI } from '../../client/types.ts';

/** `GET /v1/agents` (admin). */
export interface AgentsAnswer {
  agents: { agent: string; tools: number; calls: number; last_review_at: string | null }[];
  next_cursor: string | null;
}

/** `GET …/tools/:tool/activity`. */
export interface Activity {
  bucket: 'day' | 'hour';
  buckets: { start: string; calls: number; failures: number; offers: number }[];
}

/** `POST …/tools/:tool/preview`. */
export interface Preview {
  before: ModelTool;
  after: ModelTool;
}

export interface RevisionsAnswer {
  revisions: Revision[];
  next_cursor: string | null;
}

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

/** `GET …/upstreams`. */
export interface UpstreamsAnswer {
  upstreams: UpstreamView[];
}
