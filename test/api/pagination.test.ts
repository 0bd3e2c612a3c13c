/** List routes page with `limit` and an opaque `cursor`, answering `next_cursor` (docs/api.md "Pagination"). */
import { describe, expect, it } from 'vitest';
import { agentId, api } from '../helpers/requests.ts';
import { insertRevision, noteRevision } from '../security/fixtures.ts';

async function agentWithTool(): Promise<string> {
  const agent = agentId('pages');
  const tools = [{ name: 'lookup_order', description: 'Look up an order by its id.', parameters: { type: 'object' } }];
  expect((await api('PUT', `/v1/agents/${agent}/tools`, { body: { tools } })).status).toBe(200);
  return agent;
}

/** Every item of a list route, page by page, and the number of pages it took. */
async function walk(path: string, field: string, limit: number): Promise<{ items: any[]; pages: number }> {
  const items: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res: { status: number; body: any } = await api(
      'GET',
      `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.status).toBe(200);
    expect(res.body[field].length).toBeLessThanOrEqual(limit);
    items.push(...res.body[field]);
    cursor = res.body.next_cursor;
    pages += 1;
  } while (cursor !== null && pages < 20);
  return { items, pages };
}

describe('pagination', () => {
  it('pages revisions newest first with no item lost or repeated, also with same-time revisions', async () => {
    const agent = await agentWithTool();
    const at = '2030-01-01T00:00:00.000Z';
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      // Three share one created_at: the cursor must break ties, not skip or repeat them.
      const rev = {
        ...noteRevision('lookup_order', `Note ${i}.`),
        created_at: i < 3 ? at : `2030-01-0${i}T00:00:00.000Z`,
      };
      ids.push(await insertRevision(agent, rev));
    }
    const all = (await api('GET', `/v1/agents/${agent}/revisions`)).body;
    expect(all.revisions).toHaveLength(7);
    expect(all.next_cursor).toBeNull();
    const { items, pages } = await walk(`/v1/agents/${agent}/revisions`, 'revisions', 3);
    expect(pages).toBe(3);
    expect(items.map((r) => r.revision_id)).toEqual(all.revisions.map((r: { revision_id: string }) => r.revision_id));
    expect(new Set(items.map((r) => r.revision_id))).toEqual(new Set(ids));
    // Filters apply across pages.
    const applied = await api('GET', `/v1/agents/${agent}/revisions?status=applied&limit=2`);
    expect(applied.body).toEqual({ revisions: [], next_cursor: null });
  });

  it('pages unregistered tools and agents', async () => {
    const agent = await agentWithTool();
    const calls = ['a_tool', 'b_tool', 'c_tool', 'd_tool', 'e_tool'].map((tool) => ({
      tool,
      arguments: {},
      success: true,
    }));
    expect((await api('POST', `/v1/agents/${agent}/calls`, { body: { calls } })).status).toBe(200);
    const all = (await api('GET', `/v1/agents/${agent}/unregistered`)).body;
    expect(all.tools).toHaveLength(5);
    const { items, pages } = await walk(`/v1/agents/${agent}/unregistered`, 'tools', 2);
    expect(pages).toBe(3);
    expect(items).toEqual(all.tools);
    const agents = await walk('/v1/agents', 'agents', 1);
    expect(agents.items.map((a) => a.agent)).toContain(agent);
    expect(new Set(agents.items.map((a) => a.agent)).size).toBe(agents.items.length);
  });

  it('refuses a cursor it did not write and a limit out of range, with the error shape', async () => {
    const agent = await agentWithTool();
    const bad = await api('GET', `/v1/agents/${agent}/revisions?cursor=not-a-cursor`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', details: [{ path: ['cursor'] }] });
    expect((await api('GET', `/v1/agents/${agent}/unregistered?cursor=%25%25`)).status).toBe(400);
    expect((await api('GET', `/v1/agents/${agent}/revisions?limit=0`)).status).toBe(400);
    expect((await api('GET', '/v1/agents?limit=1001')).status).toBe(400);
  });
});
