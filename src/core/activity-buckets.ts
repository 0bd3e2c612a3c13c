/**
 * Time buckets for the dashboard's per-tool chart: calls, failed calls and routing offers
 * per UTC day or hour. Pure: the window is computed from `now`, and missing buckets are zero-filled
 * so a chart's x axis is even.
 */

export type BucketSize = 'day' | 'hour';

/** One bucket of the chart, `start` its UTC start as ISO. */
export interface ActivityBucket {
  start: string;
  calls: number;
  failures: number;
  offers: number;
}

/** The characters of an ISO time that name its bucket: `YYYY-MM-DD` or `YYYY-MM-DDTHH`. */
export const BUCKET_KEY_CHARS: Record<BucketSize, number> = { day: 10, hour: 13 };

const BUCKET_MS: Record<BucketSize, number> = { day: 86_400_000, hour: 3_600_000 };

/** The window of `span` buckets ending with the bucket that holds `now`: its first bucket's start. */
export function windowStart(now: string, size: BucketSize, span: number): string {
  const current = floorToBucket(Date.parse(now), size);
  return new Date(current - (span - 1) * BUCKET_MS[size]).toISOString();
}

/** Zero-filled buckets, oldest first, from counts keyed by bucket key (see BUCKET_KEY_CHARS). */
export function fillBuckets(
  now: string,
  size: BucketSize,
  span: number,
  calls: ReadonlyMap<string, { calls: number; failures: number }>,
  offers: ReadonlyMap<string, number>,
): ActivityBucket[] {
  const first = Date.parse(windowStart(now, size, span));
  const out: ActivityBucket[] = [];
  for (let i = 0; i < span; i += 1) {
    const start = new Date(first + i * BUCKET_MS[size]).toISOString();
    const key = start.slice(0, BUCKET_KEY_CHARS[size]);
    const c = calls.get(key);
    out.push({ start, calls: c?.calls ?? 0, failures: c?.failures ?? 0, offers: offers.get(key) ?? 0 });
  }
  return out;
}

function floorToBucket(ms: number, size: BucketSize): number {
  return Math.floor(ms / BUCKET_MS[size]) * BUCKET_MS[size];
}
