import { describe, expect, it } from 'vitest';
import { SYNC_BACKOFF_CAP_MS, syncBackoffMs, syncDue, upstreamToolNames } from '../../src/core/upstream-naming.ts';

describe('upstream tool names', () => {
  it('keeps a unique name and prefixes a name two upstreams list with each upstream', () => {
    const names = upstreamToolNames(
      [
        { upstream: 'github', tools: ['search', 'create_issue'] },
        { upstream: 'jira', tools: ['search', 'create_ticket'] },
      ],
      new Set(),
    );
    expect(Object.fromEntries(names.get('github') ?? [])).toEqual({
      search: 'github.search',
      create_issue: 'create_issue',
    });
    expect(Object.fromEntries(names.get('jira') ?? [])).toEqual({
      search: 'jira.search',
      create_ticket: 'create_ticket',
    });
  });

  it("prefixes an upstream tool that has the name of one of the agent's own tools, which keeps its name", () => {
    const names = upstreamToolNames(
      [{ upstream: 'mail', tools: ['send_email', 'list_inbox'] }],
      new Set(['send_email']),
    );
    expect(Object.fromEntries(names.get('mail') ?? [])).toEqual({
      send_email: 'mail.send_email',
      list_inbox: 'list_inbox',
    });
  });

  it('gives the same names whatever the order of the upstreams', () => {
    const a = { upstream: 'a', tools: ['x', 'y'] };
    const b = { upstream: 'b', tools: ['y', 'z'] };
    const one = upstreamToolNames([a, b], new Set());
    const two = upstreamToolNames([b, a], new Set());
    expect(Object.fromEntries(one.get('a') ?? [])).toEqual(Object.fromEntries(two.get('a') ?? []));
    expect(Object.fromEntries(one.get('b') ?? [])).toEqual(Object.fromEntries(two.get('b') ?? []));
  });

  it('does not count a name an upstream lists twice as a collision', () => {
    const names = upstreamToolNames([{ upstream: 'a', tools: ['x', 'x'] }], new Set());
    expect(names.get('a')?.get('x')).toBe('x');
  });
});

describe('sync backoff', () => {
  it('retries a failing upstream after 1, 2, 4 … minutes, capped at 6 hours', () => {
    expect(syncBackoffMs(0)).toBe(0);
    expect(syncBackoffMs(1)).toBe(60_000);
    expect(syncBackoffMs(2)).toBe(120_000);
    expect(syncBackoffMs(3)).toBe(240_000);
    expect(syncBackoffMs(100)).toBe(SYNC_BACKOFF_CAP_MS);
  });

  it('is due when never tried, or once the backoff has passed', () => {
    expect(syncDue(1_000, undefined, 5)).toBe(true);
    expect(syncDue(60_000, 0, 1)).toBe(true);
    expect(syncDue(59_999, 0, 1)).toBe(false);
    expect(syncDue(0, 0, 0)).toBe(true);
  });
});
