import type { Operator } from "../../carriers/index.ts";
import type { Config } from "../config.ts";
import type { Pool, Transact } from "../db/pool.ts";
import { storeMobileOriginated } from "../inbound/mobile-originated.ts";
import type { Logger } from "../logger.ts";
import type { BindState } from "../observability/health.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Queue } from "../queue/boss.ts";
import { ReceiptStage } from "../receipts/receipt-stage.ts";
import type { DeliverSm } from "../smpp/session.ts";
import { BindSlot } from "./bind-slot.ts";
import { CarrierLink } from "./carrier-link.ts";
import { Dispatcher } from "./dispatcher.ts";
import { limiterForBind } from "./rate-limiter.ts";

export interface OperatorWorkerDeps {
  operator: Operator;
  config: Config;
  pool: Pool;
  boss: Queue;
  /** Opens the transactions that record status changes (see src/webhooks/event-jobs.ts). */
  transact: Transact;
  logger: Logger;
  metrics: Metrics;
  owner: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Everything one worker process does for one operator: hold a bind slot, keep the SMPP link
 * up while it does, dispatch the operator's queue over it and apply the receipts it brings.
 * Losing the slot (a lease that could not be renewed) stops the link until a slot is had again.
 */
export class OperatorWorker {
  private running = false;
  private life: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  link: CarrierLink | null = null;
  /** Where the bind slot stands: not looked for yet, all held by others, ours, or not found out. */
  private slot: "starting" | "standby" | "held" | "failed" = "starting";

  constructor(private readonly d: OperatorWorkerDeps) {}

  /** For readiness: bound, standing by (others hold every slot), or neither. */
  get bindState(): BindState {
    if (!this.running) return "stopped";
    if (this.slot === "held") return this.link?.session.state === "bound" ? "bound" : "unbound";
    if (this.slot === "standby") return "standby";
    return this.slot === "failed" ? "unbound" : "starting";
  }

  start(): void {
    this.running = true;
    this.life = this.live();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.life;
  }

  private async idle(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      setTimeout(resolve, ms);
    });
    this.wake = null;
  }

  private async live(): Promise<void> {
    const { config, operator, logger } = this.d;
    const settings = config.carriers[operator];
    const slot = new BindSlot(
      this.d.pool,
      operator,
      settings.max_binds,
      this.d.owner,
      config.BIND_LEASE_SECONDS,
    );
    const leaseMs = config.BIND_LEASE_SECONDS * 1000;
    while (this.running) {
      const taken = await slot.acquire().catch((err) => {
        logger.error({ err, operator }, "bind slot lookup failed");
        return undefined;
      });
      if (taken === null || taken === undefined) {
        this.slot = taken === null ? "standby" : "failed";
        await this.idle(leaseMs / 2);
        continue;
      }
      this.slot = "held";
      logger.info({ operator, slot: taken }, "bind slot held");
      await this.serve(slot, leaseMs);
      await slot.release().catch(() => {});
    }
  }

  /** Runs the link and dispatcher until stopped or the slot's lease is lost. */
  private async serve(slot: BindSlot, leaseMs: number): Promise<void> {
    const { config, operator, logger, pool, boss, transact, metrics } = this.d;
    const settings = config.carriers[operator];
    const receipts = new ReceiptStage({
      transact,
      operator,
      settings,
      validityHours: config.MESSAGE_VALIDITY_HOURS,
      logger,
      metrics,
    });
    const link = new CarrierLink(operator, settings, {
      logger,
      rateLimiter: limiterForBind(settings.tps_limit, settings.max_binds),
      breaker: {
        errorThresholdPercentage: config.BREAKER_ERROR_PERCENT,
        volumeThreshold: config.BREAKER_VOLUME_THRESHOLD,
        resetTimeoutMs: config.BREAKER_RESET_MS,
        rollingCountTimeoutMs: config.BREAKER_WINDOW_MS,
      },
      onDeliverSm: async (pdu: DeliverSm) => {
        if (pdu.isReceipt) return receipts.take(pdu);
        await storeMobileOriginated(pool, operator, pdu);
        logger.info({ operator, source: pdu.source_addr.slice(0, 4) }, "mobile-originated message stored");
      },
      onStateChange: (state) => metrics.sessionBound.set({ operator }, state === "bound" ? 1 : 0),
      onLinkEvent: (event, reason) => metrics.smppLinkEvents.inc({ operator, event, reason }),
      onBreakerChange: (state) =>
        metrics.breakerState.set({ operator }, state === "closed" ? 0 : state === "half_open" ? 1 : 2),
    });
    const dispatcher = new Dispatcher({
      operator,
      pool,
      boss,
      transact,
      link,
      logger,
      metrics,
      submitIdFormat: settings.id_format_submit,
      batchSize: config.DISPATCH_BATCH_SIZE,
      // With a TPS limit, take no more work than a few seconds of it, so batches stay short.
      maxMessagesInFlight:
        settings.tps_limit > 0
          ? Math.max(1, Math.min(config.DISPATCH_MAX_IN_FLIGHT, settings.tps_limit * 5))
          : config.DISPATCH_MAX_IN_FLIGHT,
      maxBatchesInFlight: config.DISPATCH_BATCHES_IN_FLIGHT,
      maxJobsPerFetch: config.DISPATCH_FETCH_JOBS,
      receipts,
      pollMs: config.DISPATCH_POLL_MS,
      lockSeconds: config.DISPATCH_LOCK_SECONDS,
      validityHours: config.MESSAGE_VALIDITY_HOURS,
    });
    this.link = link;
    metrics.breakerState.set({ operator }, 0);
    link.start();
    dispatcher.start();
    while (this.running) {
      await this.idle(leaseMs / 3);
      if (!this.running) break;
      const renewed = await slot.renew().catch(() => false);
      if (!renewed) {
        logger.error({ operator }, "bind slot lease lost: unbinding");
        break;
      }
    }
    await dispatcher.stop();
    await link.close();
    await receipts.flush();
    this.link = null;
    metrics.sessionBound.set({ operator }, 0);
    metrics.breakerState.set({ operator }, 0); // not serving it: no breaker of ours is open
    await sleep(0);
  }
}
