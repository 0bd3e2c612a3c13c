/**
 * Deleting an agent (docs/api.md `DELETE /v1/agents/:agent`): its vectors in the index, every row of
 * it in D1, and its Durable Object's storage. The index goes first, then D1 in one batch, then the
 * object: a failure part-way leaves the agent registered (D1 untouched) or gone from D1 with only
 * counters left, which a new registration of the same id never reads before they are forgotten again.
 */
import type { Services } from '../env.ts';
import { notFound } from '../errors.ts';

export async function deleteAgent(svc: Services, agent: string): Promise<void> {
  if (!(await svc.store.getAgent(agent))) throw notFound(`agent ${agent}`);
  const tools = await svc.store.listTools(agent);
  if (svc.vectorIndex && tools.length > 0)
    await svc.vectorIndex.remove(
      agent,
      tools.map((t) => t.name),
    );
  await svc.store.deleteAgent(agent);
  await svc.agents.get(svc.agents.idFromName(agent)).forget();
}
