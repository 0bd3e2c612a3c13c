/**
 * Structured logs: one JSON object per line, which Workers Logs (`[observability]` in wrangler.toml)
 * indexes by field. Never pass a key, a token or an argument value.
 */

/** Fields of one log line; `event` names what happened. */
export type LogFields = Record<string, string | number | boolean | null>;

/** One error line, e.g. `logError('unhandled_error', {path, error})`. */
export function logError(event: string, fields: LogFields): void {
  console.error(JSON.stringify({ level: 'error', event, ...fields }));
}

/** One information line, e.g. `logInfo('review', {agent, duration_ms})`. */
export function logInfo(event: string, fields: LogFields): void {
  console.log(JSON.stringify({ level: 'info', event, ...fields }));
}
