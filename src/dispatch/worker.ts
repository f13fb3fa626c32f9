import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { OPERATORS, type Operator } from "../../carriers/index.ts";
import type { Config } from "../config.ts";
import type { Pool, Transact } from "../db/pool.ts";
import { sweepExpired } from "../lifecycle/index.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { every } from "../periodic.ts";
import type { Queue } from "../queue/boss.ts";
import { startEarlyReceiptSweep } from "../receipts/receipt-stage.ts";
import { transactionsWithEventJobs } from "../webhooks/event-jobs.ts";
import { OperatorWorker } from "./operator-worker.ts";

/** How often the validity sweeper looks, whatever the carriers' state, and how much one pass fails. */
const EXPIRY_SWEEP_MS = 5_000;
const EXPIRY_SWEEP_LIMIT = 1_000;

export interface RunningDispatch {
  workers: Record<Operator, OperatorWorker>;
  stop(): Promise<void>;
}

/**
 * The worker role's dispatch side: one OperatorWorker per operator, the early-receipt sweep and
 * the validity sweeper (messages past their validity fail and their holds are released even
 * while their carrier is unreachable and no worker claims them).
 */
export function startDispatch(deps: {
  config: Config;
  pool: Pool;
  boss: Queue;
  logger: Logger;
  metrics: Metrics;
}): RunningDispatch {
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // Every status change the worker makes enqueues its callbacks' jobs itself (event-jobs.ts).
  const transact = transactionsWithEventJobs(deps.pool, deps.boss, deps.config.WEBHOOK_BATCH_SIZE);
  const workers = Object.fromEntries(
    OPERATORS.map((operator) => [operator, new OperatorWorker({ ...deps, transact, operator, owner })]),
  ) as Record<Operator, OperatorWorker>;
  for (const w of Object.values(workers)) w.start();

  const sweep = startEarlyReceiptSweep({
    transact,
    graceSeconds: deps.config.RECEIPT_GRACE_SECONDS,
    sweepMs: deps.config.RECEIPT_SWEEP_MS,
    logger: deps.logger,
    metrics: deps.metrics,
  });

  const expiry = startExpirySweeper({ ...deps, transact });

  return {
    workers,
    async stop() {
      await sweep.stop();
      await expiry.stop();
      await Promise.all(Object.values(workers).map((w) => w.stop()));
    },
  };
}

/** Passes one after another, never overlapping; a full pass is followed by another at once. */
function startExpirySweeper(deps: { config: Config; transact: Transact; logger: Logger; metrics: Metrics }): {
  stop(): Promise<void>;
} {
  return every(
    EXPIRY_SWEEP_MS,
    async () => {
      // A full pass is followed by another at once, until the backlog is gone.
      for (;;) {
        const expired = await deps.transact((tx) =>
          sweepExpired(tx, { validityHours: deps.config.MESSAGE_VALIDITY_HOURS, limit: EXPIRY_SWEEP_LIMIT }),
        );
        for (const m of expired ?? []) deps.metrics.messagesExpired.inc({ operator: m.operator || "none" });
        if (expired && expired.length > 0)
          deps.logger.info({ count: expired.length }, "messages past validity failed");
        if ((expired?.length ?? 0) < EXPIRY_SWEEP_LIMIT) return;
      }
    },
    (err) => deps.logger.error({ err }, "validity sweep failed"),
  );
}
