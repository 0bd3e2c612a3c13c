/** The Worker entry: HTTP, the Cron Trigger and the per-agent Durable Object class. */
import { app } from './app.ts';
import { runScheduledReviews } from './cron.ts';
import { services, type Bindings } from './env.ts';

export { AgentObject } from './agent-object.ts';

export default {
  fetch: app.fetch,
  /** docs/learning.md: the review pass; the tick's scheduled time is its `now` (each agent's schedule is checked against it). */
  async scheduled(controller, env) {
    await runScheduledReviews(services(env), new Date(controller.scheduledTime).toISOString());
  },
} satisfies ExportedHandler<Bindings>;
