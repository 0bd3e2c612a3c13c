import { describe, expect, it } from 'vitest';
import { corsHeaders, isEmptyBatch, originAllowed, parseOrigins } from '../../src/core/mcp-http.ts';

describe('MCP endpoint origin rules', () => {
  const url = 'https://whetstone.example.com/v1/agents/a/mcp';

  it('lets a request with no Origin (not a browser) and the deployment’s own origin through', () => {
    expect(originAllowed(undefined, url, [])).toBe(true);
    expect(originAllowed('https://whetstone.example.com', url, [])).toBe(true);
    expect(originAllowed('HTTPS://Whetstone.Example.com', url, [])).toBe(true);
  });

  it('refuses a foreign origin, an opaque "null" origin and one on another port or scheme', () => {
    expect(originAllowed('https://evil.example', url, [])).toBe(false);
    expect(originAllowed('null', url, [])).toBe(false);
    expect(originAllowed('http://whetstone.example.com', url, [])).toBe(false);
    expect(originAllowed('https://whetstone.example.com:8443', url, [])).toBe(false);
  });

  it('refuses a plain-HTTP own origin under a name that is not loopback: a DNS-rebinding page', () => {
    expect(originAllowed('http://evil.example.com', 'http://evil.example.com/v1/agents/a/mcp', [])).toBe(false);
    expect(originAllowed('http://evil.example.com:8787', 'http://evil.example.com:8787/mcp', [])).toBe(false);
    expect(originAllowed('http://127.0.0.1:8787', 'http://127.0.0.1:8787/v1/agents/a/mcp', [])).toBe(true);
    expect(originAllowed('http://localhost:8787', 'http://localhost:8787/v1/agents/a/mcp', [])).toBe(true);
    expect(originAllowed('http://[::1]:8787', 'http://[::1]:8787/v1/agents/a/mcp', [])).toBe(true);
    expect(originAllowed('http://intranet.local', 'http://intranet.local/mcp', ['http://intranet.local'])).toBe(true);
  });

  it('lets the listed origins through and drops entries that are not origins', () => {
    const allowed = parseOrigins(' https://app.example/ , ftp://x.example, not a url,,http://localhost:6274');
    expect(allowed).toEqual(['https://app.example', 'http://localhost:6274']);
    expect(originAllowed('https://app.example', url, allowed)).toBe(true);
    expect(originAllowed('http://localhost:6274', url, allowed)).toBe(true);
    expect(originAllowed('http://localhost:6275', url, allowed)).toBe(false);
    expect(parseOrigins(undefined)).toEqual([]);
  });

  it('answers CORS headers only to a browser', () => {
    expect(corsHeaders(undefined)).toEqual({});
    expect(corsHeaders('https://app.example')).toMatchObject({ 'access-control-allow-origin': 'https://app.example' });
  });
});

describe('empty JSON-RPC batch', () => {
  it('is an array with no element, whitespace allowed', () => {
    expect(isEmptyBatch('[]')).toBe(true);
    expect(isEmptyBatch(' [ ]\n')).toBe(true);
  });

  it('is not a batch with a message, a single message or a body that is not JSON', () => {
    expect(isEmptyBatch('[{"jsonrpc":"2.0","method":"ping","id":1}]')).toBe(false);
    expect(isEmptyBatch('{"jsonrpc":"2.0","method":"ping","id":1}')).toBe(false);
    expect(isEmptyBatch('[')).toBe(false);
    expect(isEmptyBatch('')).toBe(false);
  });
});
