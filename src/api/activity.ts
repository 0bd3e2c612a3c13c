/**
 * `GET /v1/agents/:agent/tools/:tool/activity`: calls, failed calls and routing offers of
 * one tool per UTC day or hour, for the dashboard's chart. A read (role `agent`); the tool need not
 * be registered, so an unregistered tool's calls can be charted too.
 */
import { z } from '@hono/zod-openapi';
import { BUCKET_KEY_CHARS, fillBuckets, windowStart, type BucketSize } from '../core/activity-buckets.ts';
import { ApiError } from '../errors.ts';
import { Activity } from '../schemas.ts';
import { ToolParams, createApi, nowIso, agentRow, agentRoute } from './common.ts';

export const activityApi = createApi();

/** Longest windows: 90 days or 7 days of hours, so a read stays a bounded index range. */
export const MAX_SPAN = { day: 90, hour: 168 } as const;
const DEFAULT_SPAN = { day: 30, hour: 48 } as const;

export const ActivityQuery = z.object({
  bucket: z
    .enum(['day', 'hour'])
    .default('day')
    .openapi({ param: { name: 'bucket', in: 'query' } }),
  span: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_SPAN.hour)
    .optional()
    .openapi({ param: { name: 'span', in: 'query' }, description: 'buckets (≤ 90 days or 168 hours)' }),
});

agentRoute(activityApi, {
  method: 'get',
  path: '/v1/agents/{agent}/tools/{tool}/activity',
  need: 'read',
  summary: 'Calls, failed calls and routing offers of a tool per UTC day or hour, oldest first',
  params: ToolParams,
  query: ActivityQuery,
  answer: Activity,
  answered: 'zero-filled buckets',
  handler: async (c, { agent, tool, query }) => {
    const bucket: BucketSize = query.bucket;
    const span = query.span ?? DEFAULT_SPAN[bucket];
    if (span > MAX_SPAN[bucket]) {
      throw new ApiError('invalid_request', 'the request does not match the schema', [
        { code: 'too_big', path: ['span'], message: `span is at most ${MAX_SPAN[bucket]} for bucket=${bucket}` },
      ]);
    }
    const svc = c.get('svc');
    await agentRow(c, agent);
    const now = nowIso();
    const from = windowStart(now, bucket, span);
    const keyChars = BUCKET_KEY_CHARS[bucket];
    const [calls, offers] = await Promise.all([
      svc.activity.callCounts(agent, tool, from, keyChars),
      svc.activity.offerCounts(agent, tool, from, keyChars),
    ]);
    return c.json({ tool, bucket, from, to: now, buckets: fillBuckets(now, bucket, span, calls, offers) }, 200);
  },
});
