/**
 * The retry budget (docs/delivery.md): the first attempt at once, then one attempt after each delay
 * of EARSHOT_RETRY_SCHEDULE (default `5s,5m,30m,2h,5h,10h,10h`), each delay ±20% jitter. A
 * destination's Retry-After may only delay an attempt: the delay is the later of the jittered
 * scheduled delay and the hint, the hint capped at the schedule's longest delay. So a destination
 * can neither collapse the budget into a burst nor park a delivery beyond it.
 */
export interface RetrySchedule {
  /** Delays after attempt 1, 2, …, in ms. */
  delaysMs: readonly number[];
  /** Jitter as a fraction of each delay (0.2 = ±20%). */
  jitter: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseRetrySchedule(text: string, jitter = 0.2): RetrySchedule {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  const delaysMs = items.map((item) => {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(item);
    if (!match) {
      throw new Error(
        `EARSHOT_RETRY_SCHEDULE: "${item}" is not a delay; use a number with ms, s, m, h or d, e.g. 5s,5m,30m`,
      );
    }
    return Math.round(Number(match[1]) * UNITS[match[2]!]!);
  });
  return { delaysMs, jitter };
}

/** Total attempts the budget allows: the first plus one per delay. */
export const maxAttempts = (schedule: RetrySchedule) => schedule.delaysMs.length + 1;

/**
 * The delay before the attempt after `attempt` (1-based), or undefined when the budget is spent.
 * `random` in [0, 1) picks the jitter.
 */
export function retryDelay(
  schedule: RetrySchedule,
  attempt: number,
  options: { retryAfterMs?: number; random?: () => number } = {},
): number | undefined {
  const base = schedule.delaysMs[attempt - 1];
  if (base === undefined) return undefined;
  const random = options.random ?? Math.random;
  const scheduled = Math.round(base * (1 - schedule.jitter + 2 * schedule.jitter * random()));
  if (options.retryAfterMs === undefined) return scheduled;
  return Math.max(scheduled, Math.min(Math.max(...schedule.delaysMs), options.retryAfterMs));
}

/** The delay after the first crash of an attempt in a row (docs/delivery.md, Crashed attempts). */
export const FIRST_CRASH_DELAY_MS = 30_000;

/** The un-jittered delay after the `crashes`-th crash in a row: doubling, capped at the longest delay. */
function baseCrashDelay(schedule: RetrySchedule, crashes: number): number {
  const cap = Math.max(FIRST_CRASH_DELAY_MS, ...schedule.delaysMs);
  return Math.min(cap, FIRST_CRASH_DELAY_MS * 2 ** Math.min(crashes - 1, 30));
}

/** The delay after the `crashes`-th crash in a row (1-based), with the schedule's jitter. */
export function crashDelay(schedule: RetrySchedule, crashes: number, random: () => number = Math.random) {
  return Math.round(
    baseCrashDelay(schedule, crashes) * (1 - schedule.jitter + 2 * schedule.jitter * random()),
  );
}

/**
 * Crashes in a row that spend a delivery's budget: as many as the attempts it allows, and enough
 * that the delays between them add up to at least the schedule's whole span, so a crash streak
 * (a database that comes and goes, a bug until its fix is deployed) never ends a delivery sooner
 * than failing attempts would. Default schedule: 14 crashes, about 37 h from the first to the last.
 */
export function crashLimit(schedule: RetrySchedule): number {
  const span = schedule.delaysMs.reduce((sum, delay) => sum + delay, 0);
  let crashes = 1;
  for (let waited = 0; waited < span; crashes++) waited += baseCrashDelay(schedule, crashes);
  return Math.max(maxAttempts(schedule), crashes);
}
