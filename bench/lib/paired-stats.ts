/**
 * What a set of alternating runs of two builds says about one measure: each side's mean and its
 * standard error, and Welch's t for the difference. On the 2-core machines of this project a run
 * moves by ±20 % as the machine does, so a difference is reported only when it passes the
 * two-sided 95 % point of Student's t at Welch's degrees of freedom: with few runs a side, their
 * standard errors are themselves too rough for a fixed threshold.
 */
export interface SideSummary {
  runs: number;
  mean: number;
  /** The standard error of the mean (the sample's standard deviation over √runs); 0 for one run. */
  standardError: number;
  min: number;
  max: number;
}

export interface Comparison {
  base: SideSummary;
  candidate: SideSummary;
  /** candidate − base. */
  difference: number;
  /** The difference over base's mean (null when that mean is 0). */
  relative: number | null;
  /** The difference in standard errors of the difference (null when both sides have none). */
  t: number | null;
  /** Welch–Satterthwaite's (null with t). */
  degreesOfFreedom: number | null;
  verdict: "differs" | "within the noise" | "too few runs";
}

/** Student's t, two-sided 95 %, for 1 to 30 degrees of freedom; beyond, the next row down. */
const T_95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131,
  2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];
const T_95_BEYOND: ReadonlyArray<[number, number]> = [
  [40, 2.021],
  [60, 2.0],
  [120, 1.98],
  [Number.POSITIVE_INFINITY, 1.96],
];

/** The least |t| that is a difference at `degreesOfFreedom` (rounded down: the stricter point). */
export function criticalT(degreesOfFreedom: number): number {
  const df = Math.floor(degreesOfFreedom);
  if (df < 1) return Number.POSITIVE_INFINITY;
  if (df <= T_95.length) return T_95[df - 1] as number;
  let point = T_95[T_95.length - 1] as number;
  for (const [atLeast, value] of T_95_BEYOND) if (df >= atLeast) point = value;
  return point;
}

export function summarise(values: readonly number[]): SideSummary {
  if (values.length === 0) throw new Error("no runs to summarise");
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  const variance =
    values.length > 1 ? values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (values.length - 1) : 0;
  return {
    runs: values.length,
    mean,
    standardError: Math.sqrt(variance / values.length),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}

export function compare(baseValues: readonly number[], candidateValues: readonly number[]): Comparison {
  const base = summarise(baseValues);
  const candidate = summarise(candidateValues);
  const difference = candidate.mean - base.mean;
  const sides = { base, candidate, difference, relative: base.mean !== 0 ? difference / base.mean : null };
  const untested = { t: null, degreesOfFreedom: null };
  if (base.runs < 2 || candidate.runs < 2) return { ...sides, ...untested, verdict: "too few runs" };
  const a = base.standardError ** 2;
  const b = candidate.standardError ** 2;
  // Neither side varies: the means are exact.
  if (a + b === 0)
    return { ...sides, ...untested, verdict: difference === 0 ? "within the noise" : "differs" };
  const t = difference / Math.sqrt(a + b);
  const degreesOfFreedom = (a + b) ** 2 / (a ** 2 / (base.runs - 1) + b ** 2 / (candidate.runs - 1));
  const verdict = Math.abs(t) >= criticalT(degreesOfFreedom) ? "differs" : "within the noise";
  return { ...sides, t, degreesOfFreedom, verdict };
}

/** The order of pair `index`'s two runs: alternating, so neither side always runs second. */
export function pairOrder(index: number): ["base", "candidate"] | ["candidate", "base"] {
  return index % 2 === 0 ? ["base", "candidate"] : ["candidate", "base"];
}
