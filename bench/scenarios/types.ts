import type { Pool } from "../../src/db/pool.ts";
import type { Cleanup } from "../lib/cleanup.ts";
import type { StageSpread } from "../pipeline/callback-stages.ts";
import type { StepProgress } from "../report/progress.ts";

/** What every scenario reports, whatever it measures. */
export interface ScenarioResult {
  name: string;
  title: string;
  /** Messages accepted (sends), delivered (end to end) or requests answered (reads) per second. */
  throughput: number;
  throughput_unit: "msg/s" | "req/s";
  latency_ms: { p50: number; p90: number; p99: number; max: number };
  /** What one latency sample is. */
  latency_of: string;
  /** Requests (HTTP scenarios) or messages (end to end) measured. */
  samples: number;
  seconds: number;
  /** Transport errors, timeouts and non-2xx answers: any is a failed scenario. */
  errors: number;
  settings: Record<string, number | string>;
  /** Further named figures (the whole-pipeline scenarios'), each gateable in budgets.json. */
  measures?: Record<string, Measure>;
  /** What was checked for completeness and how many fell short (each counted in errors). */
  completeness?: Record<string, number | string>;
  /** Where the database's time went (BENCH_PIPELINE_PG_SAMPLE=1): statements by sampled busy backends. */
  pg_busy?: Array<{ statement: string; wait: string; busy_backends: number }>;
  /** Where each message's time to its callback went (BENCH_PIPELINE_STAGES=1), in ms. */
  stages?: StageSpread[];
}

export interface Measure {
  label: string;
  /** Null when it could not be measured here (e.g. a Postgres on another machine). */
  value: number | null;
  unit: string;
}

/** The API in a child process on a fresh database, with an account that cannot run dry. */
export interface HttpEnv {
  base: string;
  key: string;
  pool: Pool;
}

export interface RunOptions {
  quick: boolean;
  /** The bench's own cleanup, run on Ctrl-C: a scenario that starts processes registers here too. */
  cleanup?: Cleanup;
}

export interface Scenario {
  name: string;
  title: string;
  /** http: shares one API and database with the others; e2e: starts its own, with a worker (and more). */
  kind: "http" | "e2e";
  /** Why the scenario cannot run on this machine, or null (absent: it runs anywhere). */
  unavailable?: () => string | null;
  run(env: HttpEnv | null, progress: StepProgress, options: RunOptions): Promise<ScenarioResult>;
}
