/** The Worker entry: HTTP, the Cron Trigger and the per-agent Durable Object class. */
import { app } from './app.ts';
import type { Bindings } from './env.ts';

export { AgentObject } from './agent-object.ts';

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Bindings>;
