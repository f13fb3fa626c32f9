/** Rates and windows over event timestamps (milliseconds). */

/** Most events in any sliding window of `windowMs` (events at t and t + windowMs are a window apart). */
export function maxInWindow(sortedMs: readonly number[], windowMs = 1_000): number {
  let best = 0;
  let start = 0;
  for (let end = 0; end < sortedMs.length; end++) {
    while ((sortedMs[end] as number) - (sortedMs[start] as number) >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/**
 * The steady-state rate between first + trimMs and last − trimMs, so the ramp-up and the tail do
 * not count: the least-squares slope of the cumulative count over time. A TPS limiter releases
 * bursts (a second's worth at the top of each window), and a plain count over a cut that falls
 * just after a burst would overstate the rate by up to a burst; the slope of the staircase does
 * not. Also the plain mean over the whole seconds inside the cut. Null when there is no middle.
 */
export function steadyRate(
  sortedMs: readonly number[],
  trimMs = 1_000,
): { perSecond: number; meanOfWholeSeconds: number; seconds: number; events: number } | null {
  if (sortedMs.length < 2) return null;
  const from = (sortedMs[0] as number) + trimMs;
  const to = (sortedMs[sortedMs.length - 1] as number) - trimMs;
  if (to - from < 2_000) return null;
  const inside = sortedMs.filter((t) => t >= from && t < to);
  const n = inside.length;
  if (n < 2) return null;
  const meanT = inside.reduce((a, t) => a + t, 0) / n;
  const meanI = (n - 1) / 2;
  let cov = 0;
  let varT = 0;
  for (const [i, t] of inside.entries()) {
    cov += (t - meanT) * (i - meanI);
    varT += (t - meanT) ** 2;
  }
  const wholeSeconds = Math.floor((to - from) / 1000);
  const inWhole = inside.filter((t) => t < from + wholeSeconds * 1000).length;
  return {
    perSecond: varT > 0 ? (cov / varT) * 1000 : 0,
    meanOfWholeSeconds: inWhole / wholeSeconds,
    seconds: (to - from) / 1000,
    events: n,
  };
}

/** Events per whole second since the first one: [count in second 0, second 1, …]. */
export function perSecond(sortedMs: readonly number[]): number[] {
  if (sortedMs.length === 0) return [];
  const first = sortedMs[0] as number;
  const out: number[] = [];
  for (const t of sortedMs) {
    const s = Math.floor((t - first) / 1000);
    while (out.length <= s) out.push(0);
    out[s] = (out[s] as number) + 1;
  }
  return out;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** A scenario's latency summary from sorted milliseconds, rounded to whole ms. */
export function latencySummary(sorted: readonly number[]): {
  p50: number;
  p90: number;
  p99: number;
  max: number;
} {
  const at = (p: number) => Math.round(percentile(sorted, p));
  return { p50: at(50), p90: at(90), p99: at(99), max: Math.round(sorted[sorted.length - 1] ?? Number.NaN) };
}
