import { describe, expect, it } from 'vitest';
import {
  eventSentence,
  jsonBody,
  retryDelaySeconds,
  reviewEvents,
  signatureHeader,
  slackBody,
  webhookUrlProblem,
  type ReviewedRevision,
  type WebhookEvent,
} from '../../src/core/webhook-events.ts';

const NOW = '2026-01-01T00:00:00.000Z';
const rev = (id: string, tool: string, status: string, applied_version: number | null = null): ReviewedRevision => ({
  revision_id: id,
  tool,
  status,
  applied_version,
});
const ids = () => {
  let n = 0;
  return () => `evt_${++n}`;
};

describe('reviewEvents', () => {
  it('makes one revisions.waiting event for every revision a review left proposed, however many', () => {
    const events = reviewEvents(
      'a1',
      'rvw_1',
      [rev('rev_1', 'upload_file', 'proposed'), rev('rev_2', 'lookup_claim', 'proposed')],
      NOW,
      ids(),
    );
    expect(events).toEqual([
      {
        id: 'evt_1',
        type: 'revisions.waiting',
        agent: 'a1',
        created_at: NOW,
        data: {
          review_id: 'rvw_1',
          revisions: [
            { revision_id: 'rev_1', tool: 'upload_file' },
            { revision_id: 'rev_2', tool: 'lookup_claim' },
          ],
        },
      },
    ]);
  });

  it('splits an auto-applied review into applied and still-waiting (held) revisions', () => {
    const events = reviewEvents(
      'a1',
      'rvw_2',
      [rev('rev_1', 'upload_file', 'applied', 2), rev('rev_2', 'lookup_claim', 'proposed')],
      NOW,
      ids(),
    );
    expect(events.map((e) => [e.id, e.type, e.data])).toEqual([
      [
        'evt_1',
        'revisions.waiting',
        { review_id: 'rvw_2', revisions: [{ revision_id: 'rev_2', tool: 'lookup_claim' }] },
      ],
      [
        'evt_2',
        'revisions.applied',
        { review_id: 'rvw_2', revisions: [{ revision_id: 'rev_1', tool: 'upload_file', version: 2 }] },
      ],
    ]);
  });

  it('makes no event for a review that stored nothing', () => {
    expect(reviewEvents('a1', 'rvw_3', [], NOW, ids())).toEqual([]);
  });
});

const waiting: WebhookEvent = {
  id: 'evt_9',
  type: 'revisions.waiting',
  agent: 'claims<bot>',
  created_at: NOW,
  data: {
    review_id: 'rvw_9',
    revisions: [
      { revision_id: 'rev_1', tool: 'upload_file' },
      { revision_id: 'rev_2', tool: 'upload_file' },
    ],
  },
};

describe('bodies', () => {
  it('the json body is exactly {id, type, agent, created_at, data}', () => {
    expect(JSON.parse(jsonBody(waiting))).toEqual({
      id: 'evt_9',
      type: 'revisions.waiting',
      agent: 'claims<bot>',
      created_at: NOW,
      data: waiting.data,
    });
  });

  it('the slack body is {text, blocks} with names escaped and each tool named once', () => {
    const body = JSON.parse(slackBody(waiting));
    const text = 'Whetstone: 2 revisions of agent *claims&lt;bot&gt;* wait for approval: `upload_file`.';
    expect(body).toEqual({
      text,
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text } },
        { type: 'context', elements: [{ type: 'mrkdwn', text: 'revisions.waiting · evt_9' }] },
      ],
    });
  });

  it('says each event type in one sentence', () => {
    const failed: WebhookEvent = {
      id: 'evt_3',
      type: 'review.failed',
      agent: 'a1',
      created_at: NOW,
      data: { review_id: 'rvw_3', trigger: 'cron', error: 'D1 is unavailable' },
    };
    const applied: WebhookEvent = {
      id: 'evt_4',
      type: 'revisions.applied',
      agent: 'a1',
      created_at: NOW,
      data: { review_id: 'rvw_4', revisions: [{ revision_id: 'rev_1', tool: 'refer_llu', version: 3 }] },
    };
    expect(eventSentence(failed)).toBe('A cron review of agent *a1* failed: D1 is unavailable');
    expect(eventSentence(applied)).toBe('1 revision of agent *a1* applied by the review: `refer_llu`.');
    const dropped: WebhookEvent = {
      id: 'evt_5',
      type: 'quality.dropped',
      agent: 'a1',
      created_at: NOW,
      data: {
        date: '2026-03-02',
        hit_rate: 0.6,
        previous_date: '2026-03-01',
        previous_hit_rate: 0.8,
        fell_by: 0.25,
        threshold: 0.2,
      },
    };
    expect(eventSentence(dropped)).toBe(
      'Routing hit rate of agent *a1* fell to 60.0% on 2026-03-02 from 80.0% on 2026-03-01 (down 25.0% of it; alert above 20.0%).',
    );
    expect(JSON.parse(slackBody(dropped)).text).toBe(`Whetstone: ${eventSentence(dropped)}`);
  });
});

describe('signatureHeader', () => {
  it('is t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>"> (value computed independently with Python hmac)', async () => {
    expect(await signatureHeader('whsec_test_0123456789abcdef', 1767225600, '{"id":"evt_1"}')).toBe(
      't=1767225600,v1=50d238772cd07599b5d9521b8d6c607f1561e7611f3a5d2947112c140f1bd4d1',
    );
  });

  it('changes with the timestamp and with one byte of the body', async () => {
    const a = await signatureHeader('s'.repeat(16), 100, '{"a":1}');
    expect(await signatureHeader('s'.repeat(16), 101, '{"a":1}')).not.toBe(a.replace('t=100', 't=101'));
    expect((await signatureHeader('s'.repeat(16), 100, '{"a":2}')).slice(6)).not.toBe(a.slice(6));
  });
});

describe('webhookUrlProblem', () => {
  it('accepts https to a public host', () => {
    expect(webhookUrlProblem('https://hooks.example.com/whetstone?x=1', false)).toBeNull();
  });

  it('refuses http, loopback and private hosts, credentials and non-URLs outside local development', () => {
    const https = 'must be https (http is allowed only with WEBHOOKS_ALLOW_LOCAL)';
    const local = 'must name a public host (loopback and private hosts are allowed only with WEBHOOKS_ALLOW_LOCAL)';
    expect(webhookUrlProblem('http://hooks.example.com/', false)).toBe(https);
    for (const host of [
      'localhost',
      'api.localhost',
      '127.0.0.1',
      '[::1]',
      '10.1.2.3',
      '192.168.0.9',
      '172.20.0.1',
      '169.254.169.254',
      '0.0.0.0',
    ])
      expect(webhookUrlProblem(`https://${host}:8443/hook`, false), host).toBe(local);
    expect(webhookUrlProblem('https://user:pw@hooks.example.com/', false)).toBe(
      'must not carry a user name or password',
    );
    expect(webhookUrlProblem('hooks.example.com/x', false)).toBe('is not an absolute URL');
    expect(webhookUrlProblem('ftp://hooks.example.com/', false)).toBe(https);
  });

  it('allows http and loopback with WEBHOOKS_ALLOW_LOCAL, never another scheme', () => {
    expect(webhookUrlProblem('http://127.0.0.1:9999/hook', true)).toBeNull();
    expect(webhookUrlProblem('http://localhost/hook', true)).toBeNull();
    expect(webhookUrlProblem('file:///etc/passwd', true)).toBe('must be https (or http)');
  });
});

describe('retryDelaySeconds', () => {
  it('waits 10 s after the first try, doubles, and never more than an hour', () => {
    expect([1, 2, 3, 4, 9, 30].map(retryDelaySeconds)).toEqual([10, 20, 40, 80, 2560, 3600]);
  });
});
