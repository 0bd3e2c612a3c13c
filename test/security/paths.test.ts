/**
 * No path is a 5xx: any method on any path, with or without a token, answers 2xx-4xx and logs no
 * error. Static files are looked up by their own names only: `constructor`, `__proto__`,
 * `toString` and the other names every object inherits are a 404 like any unknown file.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ADMIN, api } from '../helpers/requests.ts';

/** Names every JavaScript object answers to: an object used as a lookup table finds them. */
const INHERITED = [
  'constructor',
  '__proto__',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupSetter__',
  'prototype',
];

let errors: unknown[][] = [];
beforeEach(() => {
  errors = [];
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    errors.push(args);
  });
});
afterEach(() => vi.restoreAllMocks());

describe('static files are looked up by their own names', () => {
  it.each(INHERITED)('GET /dashboard/%s is a 404 not_found, no error logged', async (name) => {
    const res = await api('GET', `/dashboard/${name}`, { token: null });
    expect([res.status, res.body]).toEqual([
      404,
      { error: { code: 'not_found', message: `no route GET /dashboard/${name}`, details: [] } },
    ]);
    expect(errors).toEqual([]);
  });

  it('still serves the three real files', async () => {
    for (const file of ['main.js', 'app.css', 'icon.svg'])
      expect((await api('GET', `/dashboard/${file}`, { token: null })).status).toBe(200);
  });
});

/** A path segment: inherited names, traversal, encodings, odd Unicode, or random text, percent-encoded or not. */
const segment = fc.oneof(
  fc.constantFrom(...INHERITED, '..', '.', '%2e%2e', '%2F', '%00', '%ff', '%E2%80%AE', '', 'v1', 'agents', 'tools'),
  fc.constantFrom('main.js', 'app.css', 'icon.svg', 'openapi.json', 'healthz', 'export', 'import', 'reviews', 'mcp'),
  fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent),
  fc.string({ minLength: 1, maxLength: 12, unit: 'binary' }).map(encodeURIComponent),
);
const prefix = fc.constantFrom(
  '/',
  '/dashboard/',
  '/v1/',
  '/v1/agents/',
  '/v1/agents/paths-agent/',
  '/v1/agents/paths-agent/tools/',
  '/v1/agents/paths-agent/revisions/',
  '/openapi.json/',
);
/** One segment under a prefix (where a route's parameter is read), or several, with or without a query. */
const path = fc
  .tuple(
    prefix,
    fc.oneof(fc.tuple(segment), fc.array(segment, { minLength: 0, maxLength: 4 })),
    fc.option(fc.string({ maxLength: 20 })),
  )
  .map(([head, parts, query]) => `${head}${parts.join('/')}${query === null ? '' : `?${encodeURIComponent(query)}`}`);
/** GET half the time: most routes a path parameter reaches are reads. */
const method = fc.oneof(fc.constant('GET'), fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'));

describe('no path is a 5xx', () => {
  it('any method, any path, with no token or the admin token: 2xx-4xx, no error logged', async () => {
    await fc.assert(
      fc.asyncProperty(method, path, fc.boolean(), async (m, p, admin) => {
        errors = [];
        const res = await api(m, p, { token: admin ? ADMIN : null });
        expect(res.status, `${m} ${p}`).toBeLessThan(500);
        expect(errors, `${m} ${p}`).toEqual([]);
      }),
      // The paths once answered 500, tried first on every run, then random ones.
      { numRuns: 300, examples: [['GET', '/dashboard/constructor', false] as [string, string, boolean]] },
    );
  });
});
