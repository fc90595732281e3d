/** What the benchmarks share: their settings from the environment, and percentiles. */

/** A positive whole number from the environment, or `fallback` when unset. */
export function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got "${raw}").`);
  return value;
}

/** Nearest-rank percentile of milliseconds. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
