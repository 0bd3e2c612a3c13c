/** The export format's pure rules: parsing a whole import, renaming taken ids, mapping review marks. */
import { describe, expect, it } from 'vitest';
import { parseImport, renameIds, seqMapper } from '../../src/core/agent-export.ts';

const agentLine = {
  type: 'agent',
  format: 1,
  agent: 'a',
  created_at: '2026-01-01T00:00:00.000Z',
  settings: { top_k: 3 },
  last_review_at: null,
  last_review_seq: 0,
};
const version = (name: string, v: number, source: string) => ({
  type: 'tool_version',
  name,
  version: v,
  definition: { name },
  source,
  created_at: '2026-01-01T00:00:00.000Z',
});
const ndjson = (...lines: unknown[]) => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');

describe('parseImport', () => {
  it('groups the lines by type and skips blank lines', () => {
    const parsed = parseImport(
      ndjson(agentLine, '', version('t', 1, 'registered'), '  ', version('t', 2, 'registered')),
    );
    expect(parsed.ok && parsed.bundle.versions.map((v) => v.version)).toEqual([1, 2]);
    expect(parsed.ok && parsed.bundle.agent.settings).toEqual({ top_k: 3 });
  });

  it('names the first bad line: bad JSON, a wrong shape, a second agent, a repeat, another format', () => {
    const error = (text: string) =>
      parseImport(text).ok ? null : (parseImport(text) as { error: { message: string } }).error.message;
    expect(error(ndjson(agentLine, '{oops'))).toBe('line 2: not valid JSON');
    expect(error(ndjson(agentLine, { type: 'tool_version' }))).toBe('line 2: does not match its line type');
    expect(error(ndjson(agentLine, { type: 'key', key: 'secret' }))).toBe('line 2: does not match its line type');
    expect(error(ndjson(agentLine, agentLine))).toBe('line 2: a second agent line');
    expect(error(ndjson(version('t', 1, 'registered')))).toBe(
      'line 1: the first line must be the agent line ({"type": "agent", …})',
    );
    expect(error(ndjson(agentLine, version('t', 1, 'x'), version('t', 1, 'y')))).toBe(
      'line 3: tool_version "t" version 1 appears twice',
    );
    expect(error(ndjson({ ...agentLine, format: 2 }))).toBe('line 1: does not match its line type');
    expect(error('')).toBe('line 1: the import has no agent line');
  });
});

describe('renameIds', () => {
  it('replaces an id wherever it stands alone or after revision: / undo:, and nothing else', () => {
    const parsed = parseImport(
      ndjson(
        agentLine,
        version('t', 2, 'revision:rev_1'),
        version('t', 3, 'undo:rev_1'),
        version('u', 1, 'rev_1 and more'),
      ),
    );
    if (!parsed.ok) throw new Error('parse failed');
    const renamed = renameIds(parsed.bundle, new Map([['rev_1', 'rev_new']]));
    expect(renamed.versions.map((v) => v.source)).toEqual(['revision:rev_new', 'undo:rev_new', 'rev_1 and more']);
  });
});

describe('seqMapper', () => {
  it('maps a mark to the new seq of the newest call at or before it', () => {
    const mark = seqMapper([
      [10, 101],
      [12, 102],
      [20, 103],
    ]);
    expect([0, 9, 10, 11, 12, 19, 20, 99].map(mark)).toEqual([0, 0, 101, 101, 102, 102, 103, 103]);
    expect(seqMapper([])(5)).toBe(0);
  });
});
