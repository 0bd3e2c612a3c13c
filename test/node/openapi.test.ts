/**
 * The served `/openapi.json` is a valid OpenAPI 3.1 document by a maintained parser
 * (@readme/openapi-parser: the OpenAPI schema plus checks it does not cover, such as duplicate
 * operationIds and parameters), so generated clients can rely on it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, inject, it } from 'vitest';
import { apiReference, type OpenApiDoc } from '../../scripts/api-reference.ts';

const url = inject('workerUrl');

describe('/openapi.json', () => {
  it('validates as OpenAPI 3.1', async () => {
    const res = await fetch(`${url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Exclude<Parameters<typeof validate>[0], string>;
    const result = await validate(structuredClone(doc));
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    expect((doc as { servers?: unknown }).servers).toEqual([{ url }]);
  });

  it('lists 413 on every operation that reads a body and 429 on every operation: the answers each can give', async () => {
    type Operation = { requestBody?: unknown; responses: Record<string, unknown> };
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item)) {
        const statuses = Object.keys(op.responses ?? {});
        if (!statuses.includes('429')) missing.push(`${method} ${path}: 429`);
        if (op.requestBody !== undefined && !statuses.includes('413')) missing.push(`${method} ${path}: 413`);
      }
    expect(missing).toEqual([]);
  });

  it('is what docs/api-reference.md says (UPDATE_DOCS=1 rewrites it)', async () => {
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as OpenApiDoc;
    const generated = apiReference(doc);
    const file = new URL('../../docs/api-reference.md', import.meta.url);
    if (process.env.UPDATE_DOCS === '1') writeFileSync(file, generated);
    expect(readFileSync(file, 'utf8')).toBe(generated);
  });
});
