import { readFile } from "node:fs/promises";
import { z } from "zod";
import type { PeerComparison } from "../peers/comparison.ts";
import type { ScenarioResult } from "../scenarios/types.ts";

/** A bound on one of a scenario's named measures (ScenarioResult.measures). */
const measureBudget = z
  .object({ min: z.number().optional(), max: z.number().optional(), $comment: z.string().optional() })
  .refine((b) => (b.min === undefined) !== (b.max === undefined), "give exactly one of min and max");

/**
 * Bounds on a peer comparison's figures (bench/peers/comparison.ts), per variant:
 * peers.kannel.single.e2e_ratio = { min: 1 }. Ratios, not rates, since machines differ; the
 * tolerance is 0 unless given, as the targets are the gate.
 */
const peerBudget = z
  .object({ $comment: z.string().optional(), tolerance: z.number().min(0).max(1).optional() })
  .catchall(z.record(z.string(), measureBudget));

/**
 * bench/budgets.json: per scenario, the least throughput and the most p99 a release may have,
 * and bounds on further named measures where a scenario reports them.
 */
const budgetsSchema = z.object({
  $comment: z.string().optional(),
  /** Allowed slack around each budget: 0.2 = throughput may be 20 % below, p99 20 % above. */
  tolerance: z.number().min(0).max(1),
  scenarios: z.record(
    z.string(),
    z.object({
      throughput: z.number().positive(),
      p99_ms: z.number().positive().optional(),
      measures: z.record(z.string(), measureBudget).optional(),
      tolerance: z.number().min(0).max(1).optional(),
      $comment: z.string().optional(),
    }),
  ),
  peers: z.record(z.string(), peerBudget).optional(),
});
export type Budgets = z.infer<typeof budgetsSchema>;

export async function readBudgets(path: string): Promise<Budgets> {
  return budgetsSchema.parse(JSON.parse(await readFile(path, "utf8")));
}

export interface Verdict {
  scenario: string;
  /** throughput, p99, errors, ran, or the name of one of the scenario's measures. */
  measure: string;
  unit: string;
  budget: number | null;
  /** The bound the actual figure must meet: budget × (1 ∓ tolerance). */
  limit: number | null;
  direction: "≥" | "≤" | "=";
  actual: number | null;
  status: "ok" | "REGRESSION" | "FAILED" | "not run" | "not measured" | "no budget";
}

const r1 = (v: number) => Math.round(v * 10) / 10;

/**
 * Measures that must be zero in any scenario reporting them, with a budget or without: a number
 * submitted twice is a second SMS on a handset, which no speed excuses.
 */
export const MUST_BE_ZERO = ["numbers_submitted_twice"] as const;

function mustBeZero(r: ScenarioResult): Verdict[] {
  return MUST_BE_ZERO.flatMap((measure) => {
    const m = r.measures?.[measure];
    if (!m) return [];
    const actual = m.value;
    const verdict: Verdict = {
      scenario: r.name,
      measure,
      unit: m.unit,
      budget: 0,
      limit: 0,
      direction: "=",
      actual,
      status: actual === null ? "not measured" : actual === 0 ? "ok" : "FAILED",
    };
    return [verdict];
  });
}

/**
 * Every budgeted scenario that ran is judged; one that errored fails whatever its figures, and so
 * does any scenario, budgeted or not, with a MUST_BE_ZERO measure above zero.
 */
export function check(results: readonly ScenarioResult[], budgets: Budgets): Verdict[] {
  const out: Verdict[] = [];
  for (const [name, b] of Object.entries(budgets.scenarios)) {
    const r = results.find((x) => x.name === name);
    const tolerance = b.tolerance ?? budgets.tolerance;
    if (!r) {
      out.push({
        scenario: name,
        measure: "ran",
        unit: "",
        budget: null,
        limit: null,
        direction: "=",
        actual: null,
        status: "not run",
      });
      continue;
    }
    if (r.errors > 0) {
      out.push({
        scenario: name,
        measure: "errors",
        unit: "",
        budget: 0,
        limit: 0,
        direction: "=",
        actual: r.errors,
        status: "FAILED",
      });
    }
    const minThroughput = r1(b.throughput * (1 - tolerance));
    out.push({
      scenario: name,
      measure: "throughput",
      unit: r.throughput_unit,
      budget: b.throughput,
      limit: minThroughput,
      direction: "≥",
      actual: r.throughput,
      status: r.throughput >= minThroughput ? "ok" : "REGRESSION",
    });
    if (b.p99_ms !== undefined) {
      const maxP99 = r1(b.p99_ms * (1 + tolerance));
      out.push({
        scenario: name,
        measure: "p99",
        unit: "ms",
        budget: b.p99_ms,
        limit: maxP99,
        direction: "≤",
        actual: r.latency_ms.p99,
        status: r.latency_ms.p99 <= maxP99 ? "ok" : "REGRESSION",
      });
    }
    for (const [measure, bound] of Object.entries(b.measures ?? {}))
      if (!MUST_BE_ZERO.some((m) => m === measure))
        out.push(judgeMeasure(name, r, measure, bound, tolerance));
    out.push(...mustBeZero(r));
  }
  for (const r of results) {
    if (!(r.name in budgets.scenarios)) {
      out.push({
        scenario: r.name,
        measure: "ran",
        unit: "",
        budget: null,
        limit: null,
        direction: "=",
        actual: null,
        status: "no budget",
      });
      out.push(...mustBeZero(r));
    }
  }
  return out;
}

function judgeMeasure(
  scenario: string,
  r: ScenarioResult,
  measure: string,
  bound: z.infer<typeof measureBudget>,
  tolerance: number,
): Verdict {
  const m = r.measures?.[measure];
  const atLeast = bound.min !== undefined;
  const budget = (atLeast ? bound.min : bound.max) as number;
  const limit = r1(budget * (atLeast ? 1 - tolerance : 1 + tolerance));
  const actual = m?.value ?? null;
  const met = actual !== null && (atLeast ? actual >= limit : actual <= limit);
  return {
    scenario,
    measure,
    unit: m?.unit ?? "",
    budget,
    limit,
    direction: atLeast ? "≥" : "≤",
    actual,
    status: actual === null ? "not measured" : met ? "ok" : "REGRESSION",
  };
}

/** A release passes when nothing regressed and nothing failed ("not run" is reported, not failed). */
export const passed = (verdicts: readonly Verdict[]): boolean =>
  verdicts.every((v) => v.status !== "REGRESSION" && v.status !== "FAILED");

/**
 * The peer comparisons' gate (`npm run bench -- --peers kannel --check`): each budgeted ratio's
 * median over the rounds against its bound; a variant with any run incomplete (a number not
 * submitted exactly once, a callback missing or repeated) fails whatever its ratios. A budgeted
 * peer or variant without a comparison is "not run".
 */
export function checkPeers(comparisons: readonly PeerComparison[], budgets: Budgets): Verdict[] {
  const out: Verdict[] = [];
  for (const [peer, budget] of Object.entries(budgets.peers ?? {})) {
    const tolerance = budget.tolerance ?? 0;
    const comparison = comparisons.find((c) => c.peer === peer);
    for (const [variant, bounds] of Object.entries(budget)) {
      if (variant === "$comment" || variant === "tolerance" || typeof bounds !== "object") continue;
      const scenario = `peers.${peer}.${variant}`;
      const v = comparison?.variants.find((x) => x.variant === variant);
      const base = { scenario, unit: "", budget: null, limit: null, actual: null } as const;
      if (!v) {
        out.push({ ...base, measure: "ran", direction: "=", status: "not run" });
        continue;
      }
      if (!v.complete)
        out.push({
          ...base,
          measure: "complete",
          direction: "=",
          status: "FAILED",
          actual: v.runs.filter((r) => !r.complete).length,
          unit: "runs incomplete",
        });
      for (const [measure, bound] of Object.entries(bounds)) {
        const spread = (v.ratios as Record<string, { median: number | null; unit: string }>)[measure];
        const atLeast = bound.min !== undefined;
        const budgetValue = (atLeast ? bound.min : bound.max) as number;
        const limit = Math.round(budgetValue * (atLeast ? 1 - tolerance : 1 + tolerance) * 1000) / 1000;
        const actual = spread?.median ?? null;
        const met = actual !== null && (atLeast ? actual >= limit : actual <= limit);
        out.push({
          scenario,
          measure,
          unit: spread?.unit ?? "",
          budget: budgetValue,
          limit,
          direction: atLeast ? "≥" : "≤",
          actual,
          // A gated figure the comparison could not measure fails: the gate never passes blind.
          status: actual === null ? "FAILED" : met ? "ok" : "REGRESSION",
        });
      }
    }
  }
  return out;
}
