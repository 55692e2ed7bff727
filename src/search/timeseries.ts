import type { BucketCount, Interval } from '../../projections/search-passages/queries.ts';
import { ValidationError } from '../errors.ts';

export const INTERVALS = ['day', 'week', 'month'] as const;
/** Buckets per timeseries (docs/search.md). */
export const MAX_BUCKETS = 1100;
const DAY = 86_400_000;

/** The start of the UTC bucket holding `at`: midnight, Monday midnight, or the 1st of the month. */
function bucketStart(at: Date, interval: Interval): Date {
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  if (interval === 'day') return new Date(day);
  if (interval === 'week') return new Date(day - ((new Date(day).getUTCDay() + 6) % 7) * DAY);
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

function nextBucket(start: Date, interval: Interval): Date {
  if (interval === 'day') return new Date(start.getTime() + DAY);
  if (interval === 'week') return new Date(start.getTime() + 7 * DAY);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

/** The buckets covering [since, until): contiguous, UTC; 422 past MAX_BUCKETS. */
export function bucketsOf(since: Date, until: Date, interval: Interval): Date[] {
  const buckets: Date[] = [];
  for (let at = bucketStart(since, interval); at < until; at = nextBucket(at, interval)) {
    if (buckets.length === MAX_BUCKETS)
      throw new ValidationError('range_too_large', `A timeseries has at most ${MAX_BUCKETS} buckets.`, [
        {
          location: 'query.since',
          message: `spans more than ${MAX_BUCKETS} ${interval}s`,
          value: since.toISOString(),
        },
      ]);
    buckets.push(at);
  }
  return buckets;
}

/** The timeseries body: every bucket, zero-filled where no episode fell. */
export function timeseriesOf(interval: Interval, buckets: readonly Date[], counts: readonly BucketCount[]) {
  const byStart = new Map(counts.map((c) => [bucketStart(new Date(c.bucket), interval).getTime(), c]));
  const rows = buckets.map((start) => {
    const count = byStart.get(start.getTime());
    return {
      start: start.toISOString(),
      episode_count: count?.episodes ?? 0,
      mention_count: count?.mentions ?? 0,
    };
  });
  const last = buckets.at(-1);
  return {
    interval,
    start: (buckets[0] ?? new Date(0)).toISOString(),
    end: (last ? nextBucket(last, interval) : new Date(0)).toISOString(),
    buckets: rows,
    total_episodes: rows.reduce((n, b) => n + b.episode_count, 0),
    total_mentions: rows.reduce((n, b) => n + b.mention_count, 0),
  };
}
