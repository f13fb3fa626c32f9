import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { PgBoss } from "pg-boss";
import { OPERATORS, type Operator } from "../../carriers/index.ts";
import type { Config } from "../config.ts";
import { type Pool, withTransaction } from "../db/pool.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { sweepEarlyReceipts } from "../receipts/apply-receipts.ts";
import { OperatorWorker } from "./operator-worker.ts";

export interface RunningDispatch {
  workers: Record<Operator, OperatorWorker>;
  stop(): Promise<void>;
}

/** The worker role's dispatch side: one OperatorWorker per operator, plus the early-receipt sweep. */
export function startDispatch(deps: {
  config: Config;
  pool: Pool;
  boss: PgBoss;
  logger: Logger;
  metrics: Metrics;
}): RunningDispatch {
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const workers = Object.fromEntries(
    OPERATORS.map((operator) => [operator, new OperatorWorker({ ...deps, operator, owner })]),
  ) as Record<Operator, OperatorWorker>;
  for (const w of Object.values(workers)) w.start();

  const sweep = setInterval(() => {
    withTransaction(deps.pool, (tx) => sweepEarlyReceipts(tx, deps.config.RECEIPT_GRACE_SECONDS)).then(
      ({ unknown }) => {
        for (const r of unknown) {
          deps.logger.warn(r, "delivery receipt for an unknown message id");
          deps.metrics.receiptsUnknown.inc({ operator: r.operator });
          deps.metrics.receiptsUnmatched.inc({ operator: r.operator, reason: "unknown_id" });
        }
      },
      (err) => deps.logger.error({ err }, "early receipt sweep failed"),
    );
  }, deps.config.RECEIPT_SWEEP_MS);

  return {
    workers,
    async stop() {
      clearInterval(sweep);
      await Promise.all(Object.values(workers).map((w) => w.stop()));
    },
  };
}
