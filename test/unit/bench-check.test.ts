/**
 * The release bench's gate on numbers submitted twice: any destination#part the sink received more
 * than once fails `npm run bench -- --check`, in a budgeted scenario or not, whatever its speed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { kannelUnavailable } from "../../bench/peers/compare.ts";
import {
  compareVariant,
  comparisonMarkdown,
  type PeerComparison,
  peerComparisonSchema,
  type SystemRun,
} from "../../bench/peers/comparison.ts";
import { numbersSubmittedTwice } from "../../bench/pipeline/completeness.ts";
import { type Budgets, check, checkPeers, passed } from "../../bench/report/check.ts";
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

function run(
  system: "kannel" | "shiri",
  round: number,
  figures: { accepted: number; e2e: number; p99: number; cpu: number },
  complete = true,
): SystemRun {
  return {
    system,
    round,
    accepted_msg_per_s: figures.accepted,
    accepted_req_per_s: figures.accepted,
    accept_p99_ms: 50,
    e2e_msg_per_s: figures.e2e,
    callback_p50_ms: figures.p99 / 3,
    callback_p99_ms: figures.p99,
    cpu_ms_per_msg: figures.cpu,
    cpu_detail: "",
    bench_cpu: null,
    complete,
    problems: complete ? "" : "missing_callbacks 3",
    load_average: 1,
  };
}

function comparison(variants: ReturnType<typeof compareVariant>[]): PeerComparison {
  return {
    kind: "peer-comparison",
    peer: "kannel",
    generated_at: "2026-11-28T00:00:00.000Z",
    command: "npm run bench -- --peers kannel",
    rounds: 3,
    messages: 20_000,
    warm_up: 10_000,
    machine: {},
    variants,
  };
}

const kannel = { accepted: 3_200, e2e: 3_200, p99: 700, cpu: 0.38 };
const singleBounds = {
  accepted_ratio: { min: 1 },
  e2e_ratio: { min: 1 },
  callback_p99_ms: { max: 1_000 },
  cpu_ratio: { max: 1.05 },
};
const peerBudgets: Budgets = { tolerance: 0.25, scenarios: {}, peers: { kannel: { single: singleBounds } } };

describe("the Kannel comparison's ratios and their gate", () => {
  it("reports the bench's own CPU beside each run, and reads a comparison written without it", () => {
    const withBench = {
      ...run("shiri", 1, kannel),
      cpu_detail: "Shiri 0.25 + Postgres 0.13",
      bench_cpu: { load_ms_per_msg: 0.112, sink_ms_per_msg: 0.098 },
    };
    const report = comparison([
      compareVariant("single", "single sends", [run("kannel", 1, kannel), withBench]),
    ]);
    const markdown = comparisonMarkdown(report);
    expect(markdown).toContain(
      "- round 1, shiri, CPU ms a message: Shiri 0.25 + Postgres 0.13; beside it, the bench's load with its callback receiver 0.112 and the SMPP sink 0.098",
    );
    expect(markdown).toMatch(/- round 1, kannel, CPU ms a message: \n/);

    const older = JSON.parse(JSON.stringify(report));
    for (const r of older.variants[0].runs) delete r.bench_cpu;
    expect(peerComparisonSchema.parse(older).variants[0]?.runs.map((r) => r.bench_cpu)).toEqual([null, null]);
    expect(
      peerComparisonSchema.parse(JSON.parse(JSON.stringify(report))).variants[0]?.runs[1]?.bench_cpu,
    ).toEqual({
      load_ms_per_msg: 0.112,
      sink_ms_per_msg: 0.098,
    });
  });

  it("pairs each round's runs and takes the median of the ratios, with their range", () => {
    const v = compareVariant("single", "single sends", [
      run("kannel", 1, kannel),
      run("shiri", 1, { accepted: 2_400, e2e: 1_800, p99: 4_300, cpu: 0.82 }),
      run("shiri", 2, { accepted: 3_200, e2e: 3_200, p99: 900, cpu: 0.38 }),
      run("kannel", 2, kannel),
      run("kannel", 3, { ...kannel, e2e: 1_600 }),
      run("shiri", 3, { accepted: 4_000, e2e: 3_200, p99: 800, cpu: 0.19 }),
    ]);
    expect(v.ratios.e2e_ratio).toEqual({ median: 1, min: 0.56, max: 2, unit: "×" });
    expect(v.ratios.accepted_ratio).toMatchObject({ median: 1, min: 0.75, max: 1.25 });
    expect(v.ratios.callback_p99_ms).toMatchObject({ median: 900, min: 800, max: 4_300 });
    expect(v.ratios.cpu_ratio).toMatchObject({ median: 1, min: 0.5, max: 2.16 });
    expect(v.complete).toBe(true);
  });

  it("passes at the targets and fails below them (tolerance 0 unless the peer gives one)", () => {
    const at = compareVariant("single", "single sends", [
      run("kannel", 1, kannel),
      run("shiri", 1, { accepted: 3_200, e2e: 3_200, p99: 1_000, cpu: 0.399 }),
    ]);
    const verdicts = checkPeers([comparison([at])], peerBudgets);
    expect(verdicts.map((v) => [v.scenario, v.measure, v.status])).toEqual([
      ["peers.kannel.single", "accepted_ratio", "ok"],
      ["peers.kannel.single", "e2e_ratio", "ok"],
      ["peers.kannel.single", "callback_p99_ms", "ok"],
      ["peers.kannel.single", "cpu_ratio", "ok"],
    ]);
    expect(passed(verdicts)).toBe(true);

    const today = compareVariant("single", "single sends", [
      run("kannel", 1, kannel),
      run("shiri", 1, { accepted: 2_400, e2e: 1_900, p99: 4_300, cpu: 0.82 }),
    ]);
    const failing = checkPeers([comparison([today])], peerBudgets);
    expect(failing.filter((v) => v.status === "REGRESSION").map((v) => v.measure)).toEqual([
      "accepted_ratio",
      "e2e_ratio",
      "callback_p99_ms",
      "cpu_ratio",
    ]);
    expect(passed(failing)).toBe(false);
  });

  it("fails a variant with an incomplete run, however fast", () => {
    const fastButShort = compareVariant("single", "single sends", [
      run("kannel", 1, kannel),
      run("shiri", 1, { accepted: 9_000, e2e: 9_000, p99: 100, cpu: 0.1 }, false),
    ]);
    expect(fastButShort.complete).toBe(false);
    const verdicts = checkPeers([comparison([fastButShort])], peerBudgets);
    expect(verdicts).toContainEqual(
      expect.objectContaining({ measure: "complete", status: "FAILED", actual: 1 }),
    );
    expect(passed(verdicts)).toBe(false);
  });

  it("fails a gated figure it could not measure, and reports a budgeted variant not run", () => {
    const blind = compareVariant("single", "single sends", [
      run("kannel", 1, kannel),
      { ...run("shiri", 1, kannel), cpu_ms_per_msg: null },
    ]);
    const withBulk: Budgets = {
      ...peerBudgets,
      peers: { kannel: { single: singleBounds, bulk: { e2e_ratio: { min: 1 } } } },
    };
    const verdicts = checkPeers([comparison([blind])], withBulk);
    expect(verdicts).toContainEqual(
      expect.objectContaining({ measure: "cpu_ratio", actual: null, status: "FAILED" }),
    );
    expect(verdicts).toContainEqual(
      expect.objectContaining({ scenario: "peers.kannel.bulk", measure: "ran", status: "not run" }),
    );
  });
});

describe("the Kannel comparison without Kannel", () => {
  it("says in one line that the boxes are missing, and nothing once both are there", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "no-kannel-"));
    try {
      const missing = kannelUnavailable([dir]);
      expect(missing).toMatch(/^Kannel is not installed here \(bearerbox and smsbox not found/);
      expect(missing).not.toContain("\n");
      writeFileSync(path.join(dir, "bearerbox"), "");
      expect(kannelUnavailable([dir])).toMatch(/\(smsbox not found/);
      writeFileSync(path.join(dir, "smsbox"), "");
      expect(kannelUnavailable([dir])).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
