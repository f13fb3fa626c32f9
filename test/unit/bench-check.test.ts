/**
 * The release bench's gate on numbers submitted twice: any destination#part the sink received more
 * than once fails `npm run bench -- --check`, in a budgeted scenario or not, whatever its speed.
 */
import { describe, expect, it } from "vitest";
import { numbersSubmittedTwice } from "../../bench/pipeline/completeness.ts";
import { type Budgets, check, passed } from "../../bench/report/check.ts";
import type { ScenarioResult } from "../../bench/scenarios/types.ts";

function pipelineResult(name: string, twice: number): ScenarioResult {
  return {
    name,
    title: name,
    throughput: 5_000,
    throughput_unit: "msg/s",
    latency_ms: { p50: 10, p90: 20, p99: 30, max: 40 },
    latency_of: "message",
    samples: 1_000,
    seconds: 1,
    errors: 0,
    settings: {},
    measures: {
      numbers_submitted_twice: { label: "numbers submitted twice", value: twice, unit: "numbers" },
    },
  };
}

const budgets: Budgets = {
  tolerance: 0.25,
  scenarios: { "pipeline-single": { throughput: 1_000, p99_ms: 100 } },
};

describe("bench --check on numbers submitted twice", () => {
  it("passes a fast scenario that sent every number once, and shows the check", () => {
    const verdicts = check([pipelineResult("pipeline-single", 0)], budgets);
    expect(passed(verdicts)).toBe(true);
    expect(verdicts).toContainEqual(
      expect.objectContaining({ measure: "numbers_submitted_twice", actual: 0, status: "ok" }),
    );
  });

  it("fails a scenario within every budget that sent one number twice", () => {
    const verdicts = check([pipelineResult("pipeline-single", 1)], budgets);
    expect(passed(verdicts)).toBe(false);
    expect(verdicts).toContainEqual(
      expect.objectContaining({
        scenario: "pipeline-single",
        measure: "numbers_submitted_twice",
        status: "FAILED",
      }),
    );
  });

  it("fails a scenario without a budget too", () => {
    const verdicts = check([pipelineResult("pipeline-single-2x", 3)], budgets);
    expect(verdicts.filter((v) => v.scenario === "pipeline-single-2x").map((v) => v.status)).toEqual([
      "no budget",
      "FAILED",
    ]);
    expect(passed(verdicts)).toBe(false);
  });

  it("ignores a budget that would let some through: zero is the bound", () => {
    const lax: Budgets = {
      tolerance: 0.25,
      scenarios: {
        "pipeline-single": { throughput: 1_000, measures: { numbers_submitted_twice: { max: 10 } } },
      },
    };
    expect(passed(check([pipelineResult("pipeline-single", 2)], lax))).toBe(false);
  });

  it("counts the destination#part taken more than once, not the extra copies", () => {
    expect(numbersSubmittedTwice({ "26377000001#1": 1, "26377000002#1": 3, "26377000002#2": 2 })).toBe(2);
    expect(numbersSubmittedTwice({})).toBe(0);
  });
});
