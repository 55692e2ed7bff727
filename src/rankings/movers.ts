import type { RankingRow } from '../../projections/chart_captures/queries.ts';

export type Change = 'up' | 'down' | 'new' | 'exit';

export interface Mover {
  change: Change;
  /** The entry in the latest capture, or in the baseline for an exit. */
  row: RankingRow;
  /** Rank in the baseline capture; null for a new entry. */
  baselineRank: number | null;
  /** Places climbed (negative: fallen); null for new entries and exits. */
  delta: number | null;
  baselineAt: Date;
}

const ORDER: Record<Change, number> = { up: 0, down: 1, new: 2, exit: 3 };

/**
 * The movers between a chart's baseline capture and its latest: shows that climbed (up), fell
 * (down), entered (new) or left (exit); unchanged ranks are not movers. Climbers come first, the
 * biggest climb first, then fallers (biggest fall first), new entries by rank, exits by former rank.
 */
export function compareCaptures(
  latest: readonly RankingRow[],
  baseline: readonly RankingRow[],
  baselineAt: Date,
): Mover[] {
  const before = new Map(baseline.map((row) => [row.show_key, row]));
  const now = new Set(latest.map((row) => row.show_key));
  const movers: Mover[] = [];
  for (const row of latest) {
    const old = before.get(row.show_key);
    if (!old) movers.push({ change: 'new', row, baselineRank: null, delta: null, baselineAt });
    else if (old.rank !== row.rank)
      movers.push({
        change: old.rank > row.rank ? 'up' : 'down',
        row,
        baselineRank: old.rank,
        delta: old.rank - row.rank,
        baselineAt,
      });
  }
  for (const row of baseline)
    if (!now.has(row.show_key))
      movers.push({ change: 'exit', row, baselineRank: row.rank, delta: null, baselineAt });
  return movers.sort(
    (a, b) =>
      ORDER[a.change] - ORDER[b.change] ||
      Math.abs(b.delta ?? 0) - Math.abs(a.delta ?? 0) ||
      a.row.rank - b.row.rank,
  );
}
