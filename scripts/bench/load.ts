/**
 * The load generator: autocannon at a fixed number of connections. autocannon's own histogram keeps
 * whole milliseconds, too coarse for sub-millisecond answers, so every response time (a float in ms
 * from process.hrtime) is collected from its `response` event and the percentiles computed here.
 */
import autocannon from 'autocannon';

/** One measured run: successful requests per second and latency percentiles in milliseconds. */
export interface LoadFigures {
  requests: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  /** Answers other than 2xx, and socket errors: a healthy run has none. */
  failures: number;
}

/** What to send: one request, or a list autocannon cycles through (one per request, in order). */
export interface LoadTarget {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  bodies?: string[];
}

/** The p-th percentile (0–100) of sorted values, nearest rank. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/**
 * Runs `target` for `seconds` at `connections` and returns its figures; `sink`, when given, also
 * receives every successful response time (ms), so several runs can be pooled.
 */
export function runLoad(
  target: LoadTarget,
  connections: number,
  seconds: number,
  sink?: number[],
): Promise<LoadFigures> {
  const requests = (target.bodies ?? [undefined]).map((body) => ({
    method: target.method,
    path: target.path,
    headers: { ...target.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body }),
  }));
  const times: number[] = [];
  let failures = 0;
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const instance = autocannon(
      { url: target.url, connections, duration: seconds, requests, timeout: 30 },
      (err, result) => {
        if (err) {
          reject(err);
          return;
        }
        const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
        times.sort((a, b) => a - b);
        sink?.push(...times);
        resolve({
          requests: times.length,
          rps: times.length / elapsed,
          p50: percentile(times, 50),
          p95: percentile(times, 95),
          p99: percentile(times, 99),
          failures: failures + result.errors + result.timeouts,
        });
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) times.push(ms);
      else failures++;
    });
  });
}
