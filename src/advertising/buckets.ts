import type { Interval } from '../../projections/ad-leaderboard/timeseries.ts';

const DAY = 86_400_000;

/** The UTC start of the bucket holding `at`: the day, the Monday of the week, the month's first day. */
function bucketStart(at: Date, interval: Interval): Date {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  if (interval === 'day') return day;
  if (interval === 'week') return new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * DAY);
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

function nextBucket(start: Date, interval: Interval): Date {
  if (interval === 'day') return new Date(start.getTime() + DAY);
  if (interval === 'week') return new Date(start.getTime() + 7 * DAY);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

export const utcDate = (at: Date) => at.toISOString().slice(0, 10);

/** The starts of every bucket from the one holding `from` up to (excluding) `end`, ascending. */
export function bucketStarts(from: Date, end: Date, interval: Interval): string[] {
  const starts: string[] = [];
  for (let at = bucketStart(from, interval); at < end; at = nextBucket(at, interval))
    starts.push(utcDate(at));
  return starts;
}

/** How many buckets a range spans, without listing them. */
export function bucketCount(from: Date, end: Date, interval: Interval): number {
  const start = bucketStart(from, interval);
  if (end <= start) return 0;
  if (interval === 'month')
    return (end.getUTCFullYear() - start.getUTCFullYear()) * 12 + end.getUTCMonth() - start.getUTCMonth() + 1;
  return Math.ceil((end.getTime() - start.getTime()) / (interval === 'day' ? DAY : 7 * DAY));
}
