import { describe, expect, it } from 'vitest';
import { draftFor, inferParameters, jsonTypeOf } from '../../src/core/drafts.ts';
import {
  argumentsOf,
  detectTraceFormat,
  errorEnvelope,
  outcomeOf,
  readTrace,
  traceCallId,
  turnFingerprint,
} from '../../src/core/traces.ts';
import { anthropicTrace, openAITrace } from '../fixtures/traces.ts';

describe('readTrace: OpenAI Chat Completions (docs/api.md traces)', () => {
  it('reads the last user text as the request and the calls after it with their outcome', () => {
    const reading = readTrace(openAITrace);
    expect(reading).toEqual({
      ok: true,
      trace: {
        format: 'openai',
        request: 'Upload the scan for claim CW-123456',
        request_index: 5,
        calls: [
          {
            tool_call_id: 'call_1',
            occurrence: 0,
            tool: 'upload_file',
            arguments: { claim_ref: '123456', file_mb: 12 },
            success: false,
            error: 'claim_ref must look like CW-######',
          },
          { tool_call_id: 'call_2', occurrence: 0, tool: 'lookup_claim', arguments: {}, success: true, error: null },
        ],
        unanswered: ['call_3'],
      },
    });
  });

  it('reads every call when no user message has text', () => {
    const reading = readTrace([
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', function: { name: 't', arguments: { x: 1 } } }] },
      { role: 'tool', tool_call_id: 'a', content: 'ok' },
    ]);
    expect(reading.ok && reading.trace).toMatchObject({
      request: null,
      request_index: -1,
      calls: [{ tool: 't', arguments: { x: 1 }, success: true }],
    });
  });

  it('keeps repeated tool call ids apart and pairs results in order', () => {
    const reading = readTrace([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        tool_calls: [
          { id: 'dup', function: { name: 't', arguments: '{"n": 1}' } },
          { id: 'dup', function: { name: 't', arguments: '{"n": 2}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'dup', content: 'first' },
      { role: 'tool', tool_call_id: 'dup', content: '{"error": {"message": "second failed", "code": 500}}' },
    ]);
    expect(reading.ok && reading.trace.calls).toEqual([
      { tool_call_id: 'dup', occurrence: 0, tool: 't', arguments: { n: 1 }, success: true, error: null },
      { tool_call_id: 'dup', occurrence: 1, tool: 't', arguments: { n: 2 }, success: false, error: 'second failed' },
    ]);
  });

  it('refuses a message that does not fit the format, with the path of the problem', () => {
    const reading = readTrace(
      [
        { role: 'user', content: 'x' },
        { role: 'tool', content: 'no id' },
      ],
      'openai',
    );
    expect(reading.ok).toBe(false);
    expect(!reading.ok && reading.issues.map((i) => i.path)).toEqual([['messages', 1]]);
  });

  it('refuses an Anthropic trace read as OpenAI rather than reading a run with no calls', () => {
    const reading = readTrace(anthropicTrace, 'openai');
    expect(reading.ok).toBe(false);
    expect(!reading.ok && reading.issues.map((i) => i.path)).toEqual([
      ['messages', 1, 'content', 1, 'type'],
      ['messages', 2, 'content', 0, 'type'],
      ['messages', 3, 'content', 0, 'type'],
      ['messages', 4, 'content', 0, 'type'],
      ['messages', 5, 'content', 1, 'type'],
    ]);
    expect(!reading.ok && reading.issues[0]?.message).toBe(
      'a part of type text, tool_use, tool_result must have its own fields, in its own format',
    );
  });
});

describe('readTrace: Anthropic Messages', () => {
  it('reads tool_use and tool_result blocks; a user message of tool results is not a request', () => {
    expect(readTrace(anthropicTrace)).toEqual({
      ok: true,
      trace: {
        format: 'anthropic',
        request: 'Move my meeting with Dana to Friday',
        request_index: 0,
        calls: [
          {
            tool_call_id: 'toolu_1',
            occurrence: 0,
            tool: 'find_event',
            arguments: { query: 'Dana', days: 7 },
            success: false,
            error: 'days must be at most 5',
          },
          {
            tool_call_id: 'toolu_2',
            occurrence: 0,
            tool: 'find_event',
            arguments: { query: 'Dana', days: 5 },
            success: true,
            error: null,
          },
        ],
        unanswered: ['toolu_3'],
      },
    });
  });

  it('treats text next to tool results as a new request', () => {
    const reading = readTrace([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'a', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'done' },
          { type: 'text', text: 'now the second thing' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'b', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', is_error: true }] },
    ]);
    expect(reading.ok && reading.trace).toMatchObject({
      request: 'now the second thing',
      request_index: 2,
      calls: [{ tool: 'b', success: false, error: 'the tool reported an error without text' }],
    });
  });

  it('refuses a tool_use block without an id', () => {
    const reading = readTrace(
      [{ role: 'assistant', content: [{ type: 'tool_use', name: 'a', input: {} }] }],
      'anthropic',
    );
    expect(!reading.ok && reading.issues[0]?.path.slice(0, 2)).toEqual(['messages', 0]);
  });
});

describe('trace helpers', () => {
  it('detects the format from tool_use / tool_result blocks, else OpenAI', () => {
    expect(detectTraceFormat(anthropicTrace)).toBe('anthropic');
    expect(detectTraceFormat(openAITrace)).toBe('openai');
    expect(detectTraceFormat([{ role: 'user', content: 'plain' }])).toBe('openai');
  });

  it('reads the {"error": …} envelope and nothing else as a failure', () => {
    const errors: Record<string, string | null> = {
      '{"error": "bad"}': 'bad',
      ' {"error": {"message": "nope"}} ': 'nope',
      '{"error": {"code": 7}}': '{"code":7}',
      '{"error": true}': 'true',
      '{"error": null, "ok": 1}': null,
      '{"error": ""}': null,
      'Error: boom': null,
      '["error"]': null,
      '{not json': null,
    };
    for (const [text, error] of Object.entries(errors)) expect(errorEnvelope(text), text).toBe(error);
    expect(outcomeOf({ text: 'x'.repeat(5000), is_error: true }).error).toHaveLength(4000);
  });

  it('reads arguments that are not a JSON object as {}', () => {
    expect(argumentsOf('{"a": 1}')).toEqual({ a: 1 });
    expect(argumentsOf('[1, 2]')).toEqual({});
    expect(argumentsOf('{"a": ')).toEqual({});
    expect(argumentsOf('')).toEqual({});
  });

  it('fingerprints the turn by the messages up to the request, so a longer re-post is the same turn', () => {
    const short = readTrace(openAITrace.slice(0, 8));
    const long = readTrace(openAITrace);
    expect(short.ok && long.ok).toBe(true);
    if (!short.ok || !long.ok) return;
    expect(turnFingerprint(openAITrace.slice(0, 8), short.trace.request_index, 'c1')).toBe(
      turnFingerprint(openAITrace, long.trace.request_index, 'c1'),
    );
    expect(turnFingerprint(openAITrace, 5, 'c1')).not.toBe(turnFingerprint(openAITrace, 5, 'c2'));
    expect(traceCallId('t1', { tool_call_id: 'call_1', occurrence: 0 })).toBe('trace:t1:call_1');
    expect(traceCallId('t1', { tool_call_id: 'call_1', occurrence: 2 })).toBe('trace:t1:call_1#2');
  });
});

describe('drafts for unregistered tools (docs/learning.md)', () => {
  it('infers JSON types, unions when mixed, and required = present in every call', () => {
    expect(
      inferParameters([
        { ref: 'CW-1', mb: 12, tags: ['a'], opts: { x: 1 }, urgent: true, note: null },
        { ref: 'CW-2', mb: 3.5, tags: [], opts: {} },
        { ref: 7, mb: 1 },
      ]),
    ).toEqual({
      type: 'object',
      properties: {
        mb: { type: 'number' },
        note: { type: 'null' },
        opts: { type: 'object' },
        ref: { type: ['string', 'integer'] },
        tags: { type: 'array' },
        urgent: { type: 'boolean' },
      },
      required: ['mb', 'ref'],
    });
    expect(jsonTypeOf(2)).toBe('integer');
    expect(jsonTypeOf(2.5)).toBe('number');
  });

  it('uses a trace definition verbatim, else marks the inferred description as a draft', () => {
    const def = {
      name: 'x',
      description: 'Does x.',
      parameters: { type: 'object', properties: { a: { type: 'string', description: 'the a' } } },
    };
    expect(draftFor('x', def, [{ b: 1 }])).toEqual({
      definition_source: 'metadata',
      draft: def,
      untrusted: false,
      untrusted_reasons: [],
    });
    expect(draftFor('y', null, [{ b: 1 }])).toEqual({
      definition_source: 'inferred',
      draft: {
        name: 'y',
        description: 'DRAFT: describe what y does and when to use it.',
        parameters: { type: 'object', properties: { b: { type: 'integer' } }, required: ['b'] },
      },
      untrusted: false,
      untrusted_reasons: [],
    });
  });
});
