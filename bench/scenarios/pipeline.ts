import { availableParallelism } from "node:os";
import { cpuBudgetsUnavailable } from "../lib/cpu-budget.ts";
import { knob } from "../lib/knob.ts";
import { round } from "../lib/report.ts";
import { type PipelinePlan, runPipeline } from "../pipeline/run-pipeline.ts";
import type { StepProgress } from "../report/progress.ts";
import type { Scenario, ScenarioResult } from "./types.ts";

/**
 * The whole pipeline as a customer runs it (bench/pipeline/run-pipeline.ts): its own database,
 * API and worker processes, an SMPP sink and a load generator in processes of their own, and the
 * account webhook taking message.delivered callbacks.
 */
function pipeline(plan: PipelinePlan, unavailable?: () => string | null): Scenario {
  return {
    name: plan.name,
    title: plan.title,
    kind: "e2e",
    unavailable,
    run: (_env, progress, options) =>
      runPipeline(
        {
          ...plan,
          // Scale-out of any of these: more api or worker processes on the one database.
          apis: knob("BENCH_PIPELINE_APIS", plan.apis, 1, 8),
          workers: knob("BENCH_PIPELINE_WORKERS", plan.workers, 1, 8),
        },
        progress,
        options,
      ),
  };
}

/** Single sends as pipeline-single sends them, with one api and one worker: the scenarios below vary it. */
const SINGLE_SENDS = {
  mode: "single",
  messages: { full: 20_000, quick: 3_000 },
  perRequest: 1,
  inFlight: 50,
  bigRequest: 0,
  apis: 1,
  workers: 1,
} as const satisfies Omit<PipelinePlan, "name" | "title">;

export const pipelineSingle = pipeline({
  ...SINGLE_SENDS,
  name: "pipeline-single",
  title: "whole pipeline, single sends (POST /api/v1/sms, 50 in flight) → sink → delivery callback",
});

/**
 * The single-send pipeline with 100,000 numbers on the account's opt-out list (none of them a
 * recipient): beside pipeline-single, what the send path's opt-out check costs (issue 26). The
 * check is read inside the statement that writes the messages, so it adds no statement.
 */
export const pipelineSingleOptOuts = pipeline({
  ...SINGLE_SENDS,
  name: "pipeline-single-opt-outs",
  title: "whole pipeline, single sends, a 100,000-number opt-out list on the account",
  optOuts: 100_000,
});

/**
 * Below this many cores, two APIs and two workers only take turns on the cores that one of each,
 * Postgres, the load and the sink already fill, so the scenario would measure the machine, not
 * the scale-out (on two cores: 2,088 req/s against one of each's 2,922, in the same release run).
 */
const SCALED_MIN_CORES = 4;

const tooFewCores = () => {
  const cores = availableParallelism();
  return cores < SCALED_MIN_CORES
    ? `it needs ${SCALED_MIN_CORES} cores or more to spread two apis and two workers over; this machine has ${cores} ` +
        "(BENCH_PIPELINE_APIS=2 BENCH_PIPELINE_WORKERS=2 with pipeline-single runs the same here)"
    : null;
};

/** The same with two API and two worker processes on the one database (two binds allowed). */
export const pipelineSingleScaled = pipeline(
  {
    ...SINGLE_SENDS,
    name: "pipeline-single-2x",
    title: "whole pipeline, single sends, two api and two worker processes (two binds)",
    apis: 2,
    workers: 2,
  },
  tooFewCores,
);

export const pipelineBulk = pipeline({
  name: "pipeline-bulk",
  title:
    "whole pipeline, bulk sends (100 recipients, 10 in flight) → sink → delivery callback; one 10,000-recipient request mid-run",
  mode: "bulk",
  messages: { full: 20_000, quick: 5_000 },
  perRequest: 100,
  inFlight: 10,
  bigRequest: 10_000,
  apis: 1,
  workers: 1,
});

/**
 * One process of a role, then two, on the same plan; the speed-up is what the second adds to the
 * figure that role carries (end to end for workers, requests accepted for APIs).
 * BENCH_PIPELINE_APIS and _WORKERS leave these alone: their process counts are what they compare.
 */
function scaleOut(
  plan: PipelinePlan,
  role: "apis" | "workers",
  figure: { measure: string; label: string; unit: string },
  processes: string,
  unavailable?: () => string | null,
): Scenario {
  const one = role === "apis" ? "api" : "worker";
  return {
    name: plan.name,
    title: plan.title,
    kind: "e2e",
    unavailable,
    async run(_env, progress, options) {
      const half = (offset: number, label: string): StepProgress => ({
        update: (fraction, note) => progress.update(offset + fraction / 2, `${label}: ${note ?? ""}`),
        done: () => {},
      });
      const single = await runPipeline(plan, half(0, `1 ${one}`), options);
      const double = await runPipeline({ ...plan, [role]: 2 }, half(0.5, `2 ${one}s`), options);
      const figureOf = (result: ScenarioResult) =>
        figure.measure === "throughput"
          ? result.throughput
          : (result.measures?.[figure.measure]?.value ?? null);
      const [from, to] = [figureOf(single), figureOf(double)];
      const prefixed = (prefix: string, record: Record<string, number | string> | undefined) =>
        Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [`${prefix}_${key}`, value]));
      return {
        ...double,
        name: plan.name,
        title: plan.title,
        errors: single.errors + double.errors,
        settings: { ...double.settings, processes },
        measures: {
          ...double.measures,
          scale_out_one: { label: `${figure.label} with one ${one}`, value: from, unit: figure.unit },
          scale_out_two: { label: `${figure.label} with two ${one}s`, value: to, unit: figure.unit },
          // Both runs' numbers: one sent twice in either fails the scenario.
          numbers_submitted_twice: {
            label: "destination#part the sink received more than once, both runs",
            value:
              (single.measures?.numbers_submitted_twice?.value ?? 0) +
              (double.measures?.numbers_submitted_twice?.value ?? 0),
            unit: "numbers",
          },
          scale_out_speedup: {
            label: `${figure.label}: two ${one}s ÷ one`,
            value: from && to !== null ? round(to / from, 2) : null,
            unit: "×",
          },
        },
        completeness: {
          ...prefixed(`one_${one}`, single.completeness),
          ...prefixed(`two_${one}s`, double.completeness),
        },
      };
    },
  };
}

/**
 * Workers where the carrier is the limit: a carrier that answers each submit after 50 ms and
 * takes 10 submits in flight per bind carries at most 200 a second on one bind, and allows two.
 * The same single-send pipeline runs with one worker, then with two (one bind each), on a machine
 * whose CPU is not what holds either back.
 */
export const pipelineScaleOut = scaleOut(
  {
    ...SINGLE_SENDS,
    name: "pipeline-scale-out",
    title:
      "whole pipeline, single sends, carrier answering after 50 ms (window 10, two binds): 1 then 2 workers",
    messages: { full: 6_000, quick: 1_500 },
    carrier: { answerDelayMs: 50, windowSize: 10, maxBinds: 2 },
  },
  "workers",
  { measure: "throughput", label: "end to end", unit: "msg/s" },
  "1 api; 1 worker, then 2 (one bind each); SMPP sink, load generator",
);

/**
 * APIs where each process has a CPU limit, as replicas in containers do: each API process is
 * held to BENCH_PIPELINE_API_MILLICORES thousandths of a core (default 150), so a two-core
 * machine has the cores for a second one. The single-send pipeline, every stage running, with
 * one API, then two; the speed-up is in requests accepted a second.
 */
export const pipelineApiScaleOut = scaleOut(
  {
    ...SINGLE_SENDS,
    name: "pipeline-api-scale-out",
    title: "whole pipeline, single sends, each api process held to a CPU budget: 1 then 2 apis",
    // Each new API compiles its hot paths within its own quota. With 10,000 sends that warm-up
    // weighed enough to show 1.16-1.20x where 20,000 showed 1.30-1.55x (four runs each).
    messages: { full: 20_000, quick: 2_000 },
    apiMillicores: 150,
  },
  "apis",
  { measure: "accepted_req_per_s", label: "requests accepted a second", unit: "req/s" },
  "1 api, then 2 (each with its CPU budget); 1 worker; SMPP sink, load generator",
  cpuBudgetsUnavailable,
);
