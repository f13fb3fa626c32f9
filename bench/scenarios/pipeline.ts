import { type PipelinePlan, runPipeline } from "../pipeline/run-pipeline.ts";
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
    run: (_env, progress, options) => runPipeline(plan, progress, options),
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
