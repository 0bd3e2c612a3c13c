/** `/openapi.json` names every operation and carries the package version and this server. */
import { describe, expect, it } from 'vitest';
import pkg from '../../package.json';
import { api } from '../helpers/requests.ts';

interface Doc {
  info: { version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>>;
}

describe('GET /openapi.json', () => {
  it('gives every operation a unique operationId and a tag, the package version and the server', async () => {
    const { status, body } = await api<Doc>('GET', '/openapi.json', { token: null });
    expect(status).toBe(200);
    expect(body.info.version).toBe(pkg.version);
    expect(body.servers).toEqual([{ url: 'http://whetstone.test' }]);
    const ops = Object.entries(body.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, ...op })),
    );
    expect(ops.length).toBeGreaterThan(20);
    for (const op of ops) {
      expect(op.operationId, `${op.method} ${op.path}`).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(op.tags?.length, `${op.method} ${op.path}`).toBe(1);
    }
    const ids = ops.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const byRoute = Object.fromEntries(ops.map((op) => [`${op.method} ${op.path}`, op.operationId]));
    expect(byRoute).toMatchObject({
      'get /v1/agents': 'listAgents',
      'put /v1/agents/{agent}/tools': 'putTools',
      'get /v1/agents/{agent}/tools/{tool}': 'getTool',
      'post /v1/agents/{agent}/route': 'route',
      'post /v1/agents/{agent}/calls': 'reportCalls',
      'get /v1/agents/{agent}/config': 'getConfig',
      'post /v1/agents/{agent}/revisions/{id}/apply': 'applyRevision',
      'post /v1/agents/{agent}/tools/{tool}/undo': 'undoTool',
      'delete /v1/agents/{agent}': 'deleteAgent',
      'get /v1/agents/{agent}/export': 'getExport',
      'post /v1/agents/{agent}/import': 'import',
    });
  });
});
