/** The nearest-rank p-th percentile (p in 0–100) of ascending `sorted`; NaN when it is empty. */
export const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
