/**
 * The client's types, inferred from the same zod schemas that validate the API: `z.input`
 * for what a method sends (defaults may be left out), `z.output` for what it answers. The imports
 * are type-only, so a bundle of the client carries neither zod nor the schemas.
 */
import type { z } from '@hono/zod-openapi';
import type * as S from '../schemas.ts';

/** A tool definition in any of the four accepted shapes (docs/api.md ToolDef). */
export type ToolDef = z.input<typeof S.ToolDef>;
export type ToolRow = z.output<typeof S.ToolRow>;
export type ModelTool = z.output<typeof S.ModelTool>;
/** An upstream MCP server of the gateway (`GET …/upstreams/:name`). */
export type Upstream = z.output<typeof S.Upstream>;
export type RegisterToolsAnswer = z.output<typeof S.PutToolsAnswer>;
export type ToolVersion = z.output<typeof S.ToolVersion>;
export type RouteInput = z.input<typeof S.RouteBody>;
export type RouteResult = z.output<typeof S.RouteResult>;
/** One call to report (docs/api.md Call). */
export type Call = z.input<typeof S.CallIn>;
export type RecordCallsAnswer = z.output<typeof S.PostCallsAnswer>;
export type TraceInput = z.input<typeof S.TraceBody>;
export type TraceAnswer = z.output<typeof S.TraceAnswer>;
export type OutcomeInput = z.input<typeof S.OutcomeBody>;
export type ReviewInput = z.input<typeof S.ReviewBody>;
export type Review = z.output<typeof S.Review>;
export type Revision = z.output<typeof S.Revision>;
export type RevisionStatus = z.output<typeof S.RevisionStatus>;
export type ApplyInput = z.input<typeof S.ApplyBody>;
export type DismissInput = z.input<typeof S.DismissBody>;
export type Flag = z.output<typeof S.Flag>;
export type FlagsAnswer = z.output<typeof S.FlagsAnswer>;
export type UnregisteredTool = z.output<typeof S.UnregisteredTool>;
export type UnregisteredAnswer = z.output<typeof S.UnregisteredAnswer>;
export type Settings = z.output<typeof S.Settings>;
export type SettingsPatch = z.input<typeof S.SettingsPatch>;
export type ErrorBody = z.output<typeof S.ErrorBody>;
export type WhoAmI = z.output<typeof S.WhoAmI>;
export type BulkAnswer = z.output<typeof S.BulkAnswer>;
/** `POST …/revisions/:id/try`: an approver's edit of the lines, or `{}` for the lines as proposed. */
export type TryInput = z.input<typeof S.TryBody>;
export type TryAnswer = z.output<typeof S.TryAnswer>;
export type TestEndpointInput = z.input<typeof S.TestEndpointBody>;
export type TestEndpoint = z.output<typeof S.TestEndpoint>;
/** `GET …/quality` (docs/api.md "Quality"): routing quality per UTC day and per applied revision. */
export type QualityAnswer = z.output<typeof S.Quality>;
/** `GET …/revisions`: a page, newest first. */
export type RevisionsAnswer = z.output<typeof S.RevisionPage>;
/** `GET /v1/agents` (admin). */
export type AgentsAnswer = z.output<typeof S.AgentList>;
/** `GET …/tools/:tool/activity`. */
export type Activity = z.output<typeof S.Activity>;
/** `POST …/tools/:tool/preview`. */
export type Preview = z.output<typeof S.Preview>;
/** `GET …/upstreams`. */
export type UpstreamsAnswer = z.output<typeof S.UpstreamList>;

/** `GET …/revisions` filters (docs/api.md). */
export interface RevisionsQuery {
  tool?: string;
  status?: RevisionStatus;
  /** Revisions per page (1–1000, default 1000). */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

export interface QualityQuery {
  days?: number;
  tool?: string;
}
