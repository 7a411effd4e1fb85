/** The p-th percentile of ascending values by the nearest-rank rule (NaN when there are none); every benchmark prints these. */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
