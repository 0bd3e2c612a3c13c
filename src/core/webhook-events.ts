/**
 * Webhooks (docs/integrations.md "Webhooks"), the pure part: which events a review makes, the
 * bodies a receiver gets (generic JSON, or Slack-compatible), the signature header, the rule for a
 * receiver's URL, and how long a failed delivery waits before its next try. Time comes in as
 * arguments; signing uses Web Crypto, which Workers and Node both have.
 */

/** The event types an agent's webhooks may ask for, in the order docs/integrations.md lists them. */
export const WEBHOOK_EVENT_TYPES = [
  'revisions.waiting',
  'revisions.applied',
  'review.failed',
  'quality.dropped',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A revision an event names. */
export interface EventRevision {
  revision_id: string;
  tool: string;
}

/** What an event says; `id` is the same on every delivery of it, so a receiver deduplicates by it. */
export type WebhookEvent =
  | EventBase<'revisions.waiting', { review_id: string; revisions: EventRevision[] }>
  | EventBase<'revisions.applied', { review_id: string; revisions: (EventRevision & { version: number | null })[] }>
  | EventBase<'review.failed', { review_id: string; trigger: string; error: string }>
  | EventBase<'quality.dropped', HitRateDrop>;

/** A UTC day whose routing hit rate fell from the day before by more than the agent's set share. */
export interface HitRateDrop {
  date: string;
  hit_rate: number;
  previous_date: string;
  previous_hit_rate: number;
  /** (previous − this) / previous: the share of the day before's hit rate that was lost. */
  fell_by: number;
  /** The agent's `hit_rate_drop_share` it was compared with. */
  threshold: number;
}

/** One day's hit rate, as `GET …/quality` answers it (null on a day routing ranked no served request). */
export interface DayRate {
  date: string;
  hit_rate: number | null;
}

/**
 * The drop from `previous` to `day`, or null: both days need a hit rate, the day before a rate
 * above zero, and the fall, as a share of the day before's rate, must exceed `share` (so a share
 * of 1 never fires: a rate cannot fall by more than all of it).
 */
export function hitRateDrop(previous: DayRate, day: DayRate, share: number): HitRateDrop | null {
  if (previous.hit_rate === null || day.hit_rate === null || previous.hit_rate <= 0) return null;
  const fell_by = (previous.hit_rate - day.hit_rate) / previous.hit_rate;
  // Past the share by more than rounding: 0.8 → 0.6 is a fall of exactly a quarter, not more.
  if (!(fell_by > share + 1e-9)) return null;
  return {
    date: day.date,
    hit_rate: day.hit_rate,
    previous_date: previous.date,
    previous_hit_rate: previous.hit_rate,
    fell_by,
    threshold: share,
  };
}

interface EventBase<T extends WebhookEventType, D> {
  id: string;
  type: T;
  agent: string;
  created_at: string;
  data: D;
}

/** A stored review's revisions as the events read them: a `proposed` one waits for a person. */
export interface ReviewedRevision {
  revision_id: string;
  tool: string;
  status: string;
  applied_version: number | null;
}

/**
 * The events of one stored review: at most one `revisions.waiting` (every revision it left
 * proposed, however many) and one `revisions.applied` (those `auto_apply` applied). A review that
 * stored nothing makes none. `newId` names each event.
 */
export function reviewEvents(
  agent: string,
  reviewId: string,
  revisions: readonly ReviewedRevision[],
  now: string,
  newId: () => string,
): WebhookEvent[] {
  const waiting = revisions.filter((r) => r.status === 'proposed');
  const applied = revisions.filter((r) => r.status === 'applied');
  const events: WebhookEvent[] = [];
  if (waiting.length > 0) {
    events.push({
      id: newId(),
      type: 'revisions.waiting',
      agent,
      created_at: now,
      data: { review_id: reviewId, revisions: waiting.map(({ revision_id, tool }) => ({ revision_id, tool })) },
    });
  }
  if (applied.length > 0) {
    events.push({
      id: newId(),
      type: 'revisions.applied',
      agent,
      created_at: now,
      data: {
        review_id: reviewId,
        revisions: applied.map(({ revision_id, tool, applied_version }) => ({
          revision_id,
          tool,
          version: applied_version,
        })),
      },
    });
  }
  return events;
}

/** The body a `json` webhook receives: the event itself, as compact JSON. */
export function jsonBody(event: WebhookEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    agent: event.agent,
    created_at: event.created_at,
    data: event.data,
  });
}

/** Slack's mrkdwn treats &, < and > as markup: agent and tool names are shown as text. */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Tool names of an event, each once, in first-seen order. */
function toolsOf(revisions: readonly EventRevision[]): string {
  return [...new Set(revisions.map((r) => r.tool))].map((t) => `\`${slackEscape(t)}\``).join(', ');
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The one line an event says in a chat message. */
export function eventSentence(event: WebhookEvent): string {
  const agent = `*${slackEscape(event.agent)}*`;
  switch (event.type) {
    case 'revisions.waiting': {
      const n = event.data.revisions.length;
      return `${plural(n, 'revision', 'revisions')} of agent ${agent} ${n === 1 ? 'waits' : 'wait'} for approval: ${toolsOf(event.data.revisions)}.`;
    }
    case 'revisions.applied':
      return `${plural(event.data.revisions.length, 'revision', 'revisions')} of agent ${agent} applied by the review: ${toolsOf(event.data.revisions)}.`;
    case 'review.failed':
      return `A ${slackEscape(event.data.trigger)} review of agent ${agent} failed: ${slackEscape(event.data.error)}`;
    case 'quality.dropped': {
      const d = event.data;
      const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
      return `Routing hit rate of agent ${agent} fell to ${pct(d.hit_rate)} on ${d.date} from ${pct(d.previous_hit_rate)} on ${d.previous_date} (down ${pct(d.fell_by)} of it; alert above ${pct(d.threshold)}).`;
    }
  }
}

/**
 * The body a `slack` webhook receives, in the shape of a Slack incoming webhook message: `text`
 * (the notification and fallback) and `blocks` (the same sentence, and the event id and type as
 * context).
 */
export function slackBody(event: WebhookEvent): string {
  const text = `Whetstone: ${eventSentence(event)}`;
  return JSON.stringify({
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${event.type} · ${event.id}` }] },
    ],
  });
}

/** The signature header's name (docs/integrations.md "Verifying a delivery"). */
export const SIGNATURE_HEADER = 'Whetstone-Signature';

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the secret>`: the timestamp is
 * inside what is signed, so a receiver that refuses an old `t` refuses a replayed delivery.
 */
export async function signatureHeader(secret: string, unixSeconds: number, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const mac = await crypto.subtle.sign('HMAC', key, enc.encode(`${unixSeconds}.${body}`));
  const hex = Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, '0')).join('');
  return `t=${unixSeconds},v1=${hex}`;
}

/** Host names and address literals that reach the machine itself or a private network. */
const LOCAL_HOST =
  /^(localhost|.*\.localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1?\]|\[::ffff:127\.[\d.]+\]|10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+|172\.(1[6-9]|2\d|3[01])\.\d+\.\d+|169\.254\.\d+\.\d+|\[f[cd][0-9a-f]*:.*\]|\[fe80:.*\])$/i;

/**
 * Why a receiver's URL is refused, or null: it must be `https` to a public host. With
 * `allowLocal` (WEBHOOKS_ALLOW_LOCAL, for local development only) an `http` URL or a loopback or
 * private host is allowed too, so a receiver on the developer's machine can be tried.
 */
export function webhookUrlProblem(raw: string, allowLocal: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (allowLocal) return url.protocol === 'https:' || url.protocol === 'http:' ? null : 'must be https (or http)';
  if (url.protocol !== 'https:') return 'must be https (http is allowed only with WEBHOOKS_ALLOW_LOCAL)';
  if (LOCAL_HOST.test(url.hostname))
    return 'must name a public host (loopback and private hosts are allowed only with WEBHOOKS_ALLOW_LOCAL)';
  return null;
}

/**
 * Seconds before a failed delivery's next try (`attempts` tries made so far, from 1): 10 s, then
 * doubling, at most an hour — a receiver that is down for a deploy gets it again soon, one that is
 * down for long is not hammered. Queues caps a retry delay at 12 hours.
 */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(3600, 10 * 2 ** Math.max(0, attempts - 1));
}
