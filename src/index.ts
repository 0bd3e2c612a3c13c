/** The Worker entry: HTTP, the Cron Trigger and the per-agent Durable Object class. */
import { app } from './app.ts';
import { runScheduledReviews, runUpstreamSyncs } from './cron.ts';
import { services, type Bindings } from './env.ts';
import { answerAfterLoopTurn } from './keep-alive.ts';
import { logError, logInfo } from './logger.ts';
import { settleTick } from './services/quality-report.ts';
import { moveLegacyLog } from './services/legacy-log-move.ts';
import { pruneLog } from './services/retention.ts';
import { consumeWebhooks } from './services/webhook-delivery.ts';

export { AgentObject } from './agent-object.ts';

export default {
  // A long request answers after one turn of the event loop (src/keep-alive.ts).
  fetch: answerAfterLoopTurn(app.fetch),
  /**
   * docs/learning.md: moving a log an earlier version kept in D1 (docs/capacity.md), the review
   * pass, then the retention pass (docs/configuration.md `log_retention_days`), then settling
   * routing-quality hours (docs/api.md "Quality"); the tick's scheduled time is their `now`. A
   * move, retention or settle failure is logged and tried again next tick.
   */
  async scheduled(controller, env) {
    const svc = services(env);
    const now = new Date(controller.scheduledTime).toISOString();
    try {
      const legacy = await moveLegacyLog(svc);
      if (legacy.more || Object.values(legacy.moved).some((n) => n > 0))
        logInfo('legacy_log_moved', { ...legacy.moved, more: legacy.more });
    } catch (err) {
      logError('legacy_log_move_failed', { error: err instanceof Error ? err.message : String(err) });
    }
    await runScheduledReviews(svc, now);
    try {
      const pruned = await pruneLog(svc, now);
      logInfo('retention', { ...pruned.removed, more: pruned.more });
    } catch (err) {
      logError('retention_failed', { error: err instanceof Error ? err.message : String(err) });
    }
    try {
      const settled = await settleTick(svc, now);
      logInfo('quality_settled', settled);
    } catch (err) {
      logError('quality_settle_failed', { error: err instanceof Error ? err.message : String(err) });
    }
    // MCP gateway upstreams due for a re-sync (docs/integrations.md); a failing one backs off.
    try {
      const upstreams = await runUpstreamSyncs(svc, now);
      if (upstreams.synced.length + upstreams.failed.length > 0)
        logInfo('upstreams_synced', { synced: upstreams.synced.length, failed: upstreams.failed.length });
    } catch (err) {
      logError('upstream_syncs_failed', { error: err instanceof Error ? err.message : String(err) });
    }
  },
  /** docs/integrations.md "Webhooks": delivers webhook events, and records what reached the dead-letter queue. */
  async queue(batch, env) {
    await consumeWebhooks(batch, services(env), Date.now());
  },
} satisfies ExportedHandler<Bindings>;
