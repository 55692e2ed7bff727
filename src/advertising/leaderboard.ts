import {
  type Metric,
  rankSponsors,
  type SponsorCounts,
  type SponsorInfo,
  snapshotOf,
  snapshotPage,
  sponsorCounts,
  sponsorInfo,
  type WindowName,
  writeSnapshot,
} from '../../projections/ad-leaderboard/queries.ts';
import type { Db, Queryable } from '../db/db.ts';

const DAY = 86_400_000;
const CACHE_TTL_MS = 60 * 60 * 1000;
const CACHE_ENTRIES = 200;

const utcMidnight = (now: Date) =>
  new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));

/** The bounds of the three snapshot windows on the UTC day of `now` (docs/advertising.md). */
function snapshotWindows(now: Date): Record<WindowName, { since: Date | null; until: Date | null }> {
  const today = utcMidnight(now).getTime();
  return {
    all_time: { since: null, until: null },
    trailing_7d: { since: new Date(today - 7 * DAY), until: null },
    ending_30d_ago: { since: new Date(today - 37 * DAY), until: new Date(today - 30 * DAY) },
  };
}

const same = (a: Date | null | undefined, b: Date | null | undefined) =>
  (a?.getTime() ?? null) === (b?.getTime() ?? null);

/** The snapshot window a request names, if it names one exactly. */
function windowOf(now: Date, since: Date | undefined, until: Date | undefined): WindowName | null {
  const windows = snapshotWindows(now);
  for (const [name, bounds] of Object.entries(windows) as [WindowName, (typeof windows)[WindowName]][])
    if (same(bounds.since, since) && same(bounds.until, until)) return name;
  return null;
}

/** Recounts the three snapshot windows as of `now`, each replaced in one transaction. */
export async function refreshLeaderboardSnapshots(db: Db, now: Date) {
  // Names and companies as of this refresh, looked up once per sponsor across the windows.
  const info = new Map<string, SponsorInfo>();
  for (const [name, bounds] of Object.entries(snapshotWindows(now)) as [
    WindowName,
    { since: Date | null; until: Date | null },
  ][]) {
    const rows = await sponsorCounts(db, {
      since: bounds.since ?? undefined,
      until: bounds.until ?? undefined,
    });
    const missing = rows.map((r) => r.sponsor_key).filter((key) => !info.has(key));
    for (const [key, value] of await sponsorInfo(db, missing)) info.set(key, value);
    await db.transaction((tx) => writeSnapshot(tx, name, bounds, rows, info, now));
  }
}

export interface LeaderboardQuery {
  metric: Metric;
  since?: Date | undefined;
  until?: Date | undefined;
  companyId?: string | undefined;
  podcastIds?: readonly string[] | undefined;
  /** The scope's fingerprint (parameters as given), the cache key of computed windows. */
  key: string;
}

/** A ranked sponsor; snapshots also carry its name and company. */
export type RankedRow = SponsorCounts & { rank: number; info?: SponsorInfo };

/**
 * Ranked sponsors: the three snapshot windows from their snapshots (when the snapshot holds the
 * window of today), anything else counted and kept for CACHE_TTL_MS. Ranks are positions in one
 * deterministic order, so pages continue each other.
 */
export class Leaderboard {
  readonly #cache = new Map<string, { rows: SponsorCounts[]; until: number }>();
  constructor(private readonly now: () => Date) {}

  /**
   * `gate` (the plan check) runs beside the snapshot read, which costs little; nothing is counted
   * before it passes.
   */
  async page(
    db: Queryable,
    query: LeaderboardQuery,
    afterRank: number,
    limit: number,
    gate: Promise<void> = Promise.resolve(),
  ): Promise<RankedRow[]> {
    const unfiltered = query.companyId === undefined && query.podcastIds === undefined;
    const window = unfiltered ? windowOf(this.now(), query.since, query.until) : null;
    if (window) {
      const [snapshot, rows] = await Promise.all([
        snapshotOf(db, window),
        snapshotPage(db, window, query.metric, afterRank, limit),
        gate,
      ]);
      const today = snapshotWindows(this.now())[window];
      if (snapshot && same(snapshot.since, today.since) && same(snapshot.until, today.until)) return rows;
    } else await gate;
    const rows = await this.#counted(db, query);
    return rankSponsors(rows, query.metric)
      .slice(afterRank, afterRank + limit)
      .map((row, i) => ({ ...row, rank: afterRank + i + 1 }));
  }

  async #counted(db: Queryable, query: LeaderboardQuery) {
    const at = Date.now();
    const hit = this.#cache.get(query.key);
    if (hit && hit.until > at) return hit.rows;
    const rows = await sponsorCounts(db, query);
    this.#cache.delete(query.key);
    this.#cache.set(query.key, { rows, until: at + CACHE_TTL_MS });
    while (this.#cache.size > CACHE_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!);
    return rows;
  }
}
