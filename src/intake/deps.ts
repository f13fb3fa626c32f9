import type { Config } from "../config.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../logger.ts";
import type { Readiness } from "../observability/health.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Queue } from "../queue/boss.ts";
import type { SendCommitter } from "../sending/send-committer.ts";

/** What the HTTP intake needs from the rest of the service. */
export interface IntakeDeps {
  pool: Pool;
  boss: Queue;
  config: Config;
  logger: Logger;
  metrics: Metrics;
  /** What GET /readyz checks (shared with the metrics port's). */
  readiness: Readiness;
  /** Group commit of sends (one per process). */
  sends: SendCommitter;
}
