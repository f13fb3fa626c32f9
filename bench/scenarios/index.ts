import { bulk } from "./bulk.ts";
import { e2e } from "./e2e.ts";
import { idle } from "./idle.ts";
import { inbound } from "./inbound.ts";
import {
  pipelineApiScaleOut,
  pipelineBulk,
  pipelineScaleOut,
  pipelineSingle,
  pipelineSingleOptOuts,
  pipelineSingleScaled,
} from "./pipeline.ts";
import { retrieve } from "./retrieve.ts";
import { scheduled } from "./scheduled.ts";
import { single } from "./single.ts";
import type { Scenario } from "./types.ts";

/** The release bench's scenarios, in the order they run. */
export const SCENARIOS: readonly Scenario[] = [
  single,
  bulk(100, { connections: 4, seconds: 8 }),
  bulk(1_000, { connections: 2, seconds: 8 }),
  bulk(10_000, { connections: 1, seconds: 8 }),
  retrieve,
  e2e,
  scheduled,
  inbound,
  pipelineSingle,
  pipelineSingleOptOuts,
  pipelineSingleScaled,
  pipelineBulk,
  pipelineScaleOut,
  pipelineApiScaleOut,
  idle,
];
