// The statistics every benchmark reports, defined once so two benchmarks' p95 mean the same thing.

/** The nearest-rank percentile: the smallest sample that at least `p` percent of the samples do not exceed. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new RangeError("a percentile of no samples");
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile ${p} is not in (0, 100]`);
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1];
}

/** The 50th percentile (of an even count, the lower of the two middle samples). */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}
