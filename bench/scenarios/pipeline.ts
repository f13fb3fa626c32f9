import { knob } from "../lib/knob.ts";
import { round } from "../lib/report.ts";
import { type PipelinePlan, runPipeline } from "../pipeline/run-pipeline.ts";
import type { StepProgress } from "../report/progress.ts";
import type { Scenario } from "./types.ts";

/**
 * The whole pipeline as a customer runs it (bench/pipeline/run-pipeline.ts): its own database,
 * API and worker processes, an SMPP sink and a load generator in processes of their own, and the
 * account webhook taking message.delivered callbacks.
 */
function pipeline(plan: PipelinePlan): Scenario {
  return {
    name: plan.name,
    title: plan.title,
    kind: "e2e",
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

export const pipelineSingle = pipeline({
  name: "pipeline-single",
  title: "whole pipeline, single sends (POST /api/v1/sms, 50 in flight) → sink → delivery callback",
  mode: "single",
  messages: { full: 20_000, quick: 3_000 },
  perRequest: 1,
  inFlight: 50,
  bigRequest: 0,
  apis: 1,
  workers: 1,
});

/** The same with two API and two worker processes on the one database (two binds allowed). */
export const pipelineSingleScaled = pipeline({
  name: "pipeline-single-2x",
  title: "whole pipeline, single sends, two api and two worker processes (two binds)",
  mode: "single",
  messages: { full: 20_000, quick: 3_000 },
  perRequest: 1,
  inFlight: 50,
  bigRequest: 0,
  apis: 2,
  workers: 2,
});

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
 * Scale-out where the carrier is the limit: a carrier that answers each submit after 50 ms and
 * takes 10 submits in flight per bind carries at most 200 a second on one bind, and allows two.
 * The same single-send pipeline runs with one worker, then with two (one bind each), on a machine
 * whose CPU is not what holds either back; the speed-up is what the second worker process adds.
 * BENCH_PIPELINE_APIS and _WORKERS leave it alone: its process counts are what it compares.
 */
const carrierBound: PipelinePlan = {
  name: "pipeline-scale-out",
  title:
    "whole pipeline, single sends, carrier answering after 50 ms (window 10, two binds): 1 then 2 workers",
  mode: "single",
  messages: { full: 6_000, quick: 1_500 },
  perRequest: 1,
  inFlight: 50,
  bigRequest: 0,
  apis: 1,
  workers: 1,
  carrier: { answerDelayMs: 50, windowSize: 10, maxBinds: 2 },
};

export const pipelineScaleOut: Scenario = {
  name: carrierBound.name,
  title: carrierBound.title,
  kind: "e2e",
  async run(_env, progress, options) {
    const half = (offset: number, label: string): StepProgress => ({
      update: (fraction, note) => progress.update(offset + fraction / 2, `${label}: ${note ?? ""}`),
      done: () => {},
    });
    const one = await runPipeline(carrierBound, half(0, "1 worker"), options);
    const two = await runPipeline({ ...carrierBound, workers: 2 }, half(0.5, "2 workers"), options);
    const speedUp = one.throughput > 0 ? round(two.throughput / one.throughput, 2) : null;
    const prefixed = (prefix: string, record: Record<string, number | string> | undefined) =>
      Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [`${prefix}_${key}`, value]));
    return {
      ...two,
      name: carrierBound.name,
      title: carrierBound.title,
      errors: one.errors + two.errors,
      settings: {
        ...two.settings,
        processes: "1 api; 1 worker, then 2 (one bind each); SMPP sink, load generator",
      },
      measures: {
        ...two.measures,
        e2e_msg_per_s_one_worker: {
          label: "end to end with one worker",
          value: one.throughput,
          unit: "msg/s",
        },
        scale_out_speedup: {
          label: "end to end with two workers ÷ with one",
          value: speedUp,
          unit: "×",
        },
      },
      completeness: {
        ...prefixed("one_worker", one.completeness),
        ...prefixed("two_workers", two.completeness),
      },
    };
  },
};
