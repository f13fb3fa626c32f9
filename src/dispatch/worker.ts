import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { OPERATORS } from "../../carriers/index.ts";
import type { Config } from "../config.ts";
import type { Pool, Transact } from "../db/pool.ts";
import { transactionsWithEventJobs } from "../events/event-jobs.ts";
import { sweepExpired } from "../lifecycle/index.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { every, paced } from "../periodic.ts";
import type { Queue } from "../queue/boss.ts";
import { onOpenJobs, openJobsAwakeMs } from "../queue/due-watch.ts";
import { IDLE_DUTY_POLLS, type WorkSignals } from "../queue/wakeups.ts";
import { IdTally } from "../receipts/id-tally.ts";
import { startEarlyReceiptSweep } from "../receipts/receipt-stage.ts";
import { BindLeases } from "./bind-slot.ts";
import { BreakerClock } from "./breaker-clock.ts";
import { LinkWorker } from "./link-worker.ts";
import { Routes } from "./routes.ts";

/**
 * How often the validity sweeper looks while jobs are open (due or running anywhere, whatever the
 * carriers' state), and how much one pass fails. With none open it looks every IDLE_DUTY_POLLS
 * idle polls: what it could find then is a message whose job was lost, hours past its validity.
 */
const EXPIRY_SWEEP_MS = 5_000;
const EXPIRY_SWEEP_LIMIT = 1_000;
/** How often the links' learnt id relations are added to the database, and routes are shown. */
const TALLY_FLUSH_MS = 5_000;

export interface RunningDispatch {
  /** One per link, by name. */
  workers: Record<string, LinkWorker>;
  routes: Routes;
  stop(): Promise<void>;
}

/**
 * The worker role's dispatch side: one LinkWorker per link, each dispatching the operators its
 * routes give it, the early-receipt sweep and the validity sweeper (messages past their validity
 * fail and their holds are released even while their carrier is unreachable and no worker claims
 * them).
 */
export function startDispatch(deps: {
  config: Config;
  pool: Pool;
  boss: Queue;
  logger: Logger;
  metrics: Metrics;
  signals: WorkSignals;
}): RunningDispatch {
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // Every status change the worker makes enqueues its callbacks' jobs itself (event-jobs.ts).
  const transact = transactionsWithEventJobs(deps.pool, deps.boss, deps.config.WEBHOOK_BATCH_SIZE);
  const tally = new IdTally(deps.metrics);
  const workers: Record<string, LinkWorker> = {};
  const routes = new Routes(deps.config.routes, (link) => workers[link]?.down ?? true);
  const breakerClock = BreakerClock.forWindow(deps.config.BREAKER_WINDOW_MS);
  const leases = new BindLeases(deps.pool, owner, deps.config.BIND_LEASE_SECONDS);
  for (const [link, settings] of Object.entries(deps.config.links))
    workers[link] = new LinkWorker({
      ...deps,
      transact,
      link,
      settings,
      operators: routes.operatorsOf(link),
      serves: routes.serves,
      tally,
      owner,
      breakerClock,
      leases,
    });
  for (const w of Object.values(workers)) w.start();

  const sweep = startEarlyReceiptSweep({
    transact,
    graceSeconds: deps.config.RECEIPT_GRACE_SECONDS,
    sweepMs: deps.config.RECEIPT_SWEEP_MS,
    logger: deps.logger,
    metrics: deps.metrics,
    tally,
    links: deps.config.links,
    // Idle, all it finds are receipts for no known message, counted as unknown after their grace.
    idleSweepMs: IDLE_DUTY_POLLS * deps.config.IDLE_POLL_MS,
    signals: deps.signals,
  });

  const expiry = startExpirySweeper({ ...deps, transact });

  const bookkeeping = every(
    TALLY_FLUSH_MS,
    async () => {
      for (const operator of OPERATORS) {
        const serving = routes.serving(operator);
        for (const link of deps.config.routes[operator])
          deps.metrics.linkServing.set({ operator, link }, link === serving ? 1 : 0);
      }
      await tally.flush(deps.pool);
    },
    (err) => deps.logger.warn({ err }, "receipt id relations not recorded (tried again)"),
  );

  return {
    workers,
    routes,
    async stop() {
      await sweep.stop();
      await expiry.stop();
      await Promise.all(Object.values(workers).map((w) => w.stop()));
      await leases.stop();
      await bookkeeping.stop();
      breakerClock.stop();
      await tally.flush(deps.pool).catch(() => {});
    },
  };
}

/**
 * Passes one after another, never overlapping; a full pass is followed by another at once. Every
 * EXPIRY_SWEEP_MS while jobs are open or the last pass failed messages, else every
 * IDLE_DUTY_POLLS idle polls (docs/decisions/0011-idle-worker.md).
 */
function startExpirySweeper(deps: {
  config: Config;
  transact: Transact;
  logger: Logger;
  metrics: Metrics;
  signals: WorkSignals;
}): {
  stop(): Promise<void>;
} {
  const sweeping = paced(
    {
      busyMs: EXPIRY_SWEEP_MS,
      idleMs: Math.max(EXPIRY_SWEEP_MS, IDLE_DUTY_POLLS * deps.config.IDLE_POLL_MS),
      awakeMs: openJobsAwakeMs(deps.config.IDLE_POLL_MS),
    },
    async () => {
      // A full pass is followed by another at once, until the backlog is gone.
      for (;;) {
        const expired = await deps.transact((tx) =>
          sweepExpired(tx, { validityHours: deps.config.MESSAGE_VALIDITY_HOURS, limit: EXPIRY_SWEEP_LIMIT }),
        );
        for (const m of expired ?? []) deps.metrics.messagesExpired.inc({ operator: m.operator || "none" });
        if (expired && expired.length > 0)
          deps.logger.info({ count: expired.length }, "messages past validity failed");
        if ((expired?.length ?? 0) < EXPIRY_SWEEP_LIMIT) return (expired?.length ?? 0) > 0;
      }
    },
    (err) => deps.logger.error({ err }, "validity sweep failed"),
  );
  const unwatched = onOpenJobs(deps.signals, () => sweeping.keepAwake());
  return {
    async stop() {
      unwatched();
      await sweeping.stop();
    },
  };
}
