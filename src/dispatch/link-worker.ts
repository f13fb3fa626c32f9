import type { Operator, SmppSettings } from "../../carriers/index.ts";
import type { Config } from "../config.ts";
import type { Pool, Transact } from "../db/pool.ts";
import { InboundStage } from "../inbound/inbound-stage.ts";
import type { Logger } from "../logger.ts";
import type { BindState } from "../observability/health.ts";
import type { Metrics } from "../observability/metrics.ts";
import { jittered } from "../periodic.ts";
import type { Queue } from "../queue/boss.ts";
import { INBOUND_TOPIC, type WorkSignals } from "../queue/wakeups.ts";
import type { IdTally } from "../receipts/id-tally.ts";
import { ReceiptStage } from "../receipts/receipt-stage.ts";
import { VALIDITY_PERIOD_MAX } from "../sending/prepare-send.ts";
import type { DeliverSm } from "../smpp/session.ts";
import { UnansweredSubmits } from "../smpp/unanswered-submits.ts";
import { type BindLeases, BindSlot } from "./bind-slot.ts";
import type { BreakerClock } from "./breaker-clock.ts";
import { CarrierLink } from "./carrier-link.ts";
import { Dispatcher } from "./dispatcher.ts";
import { pacerForBind } from "./tps-pacer.ts";

export interface LinkWorkerDeps {
  /** The link's name: SMPP_<LINK>_* are its settings. */
  link: string;
  settings: SmppSettings;
  /** The operators whose route names this link, in no particular order. */
  operators: readonly Operator[];
  /** Whether this link is the one an operator's messages go over now (routes.ts). */
  serves: (operator: Operator, link: string) => boolean;
  config: Config;
  pool: Pool;
  boss: Queue;
  /** Opens the transactions that record status changes (see src/events/event-jobs.ts). */
  transact: Transact;
  logger: Logger;
  metrics: Metrics;
  tally: IdTally;
  owner: string;
  /** Announcements of work: an idle dispatcher sleeps until its operator's. */
  signals: WorkSignals;
  /** Turns every link's breaker window, only while submits are recent (breaker-clock.ts). */
  breakerClock: BreakerClock;
  /** Renews the bind slots of all the process's links together (bind-slot.ts). */
  leases: BindLeases;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Everything one worker process does for one link (an SMPP account): hold a bind slot, keep the
 * session up while it does, dispatch the queue of each operator the link serves now over it, and
 * apply the receipts and store the messages that arrive on it. Losing the slot (a lease that could
 * not be renewed) stops the link until a slot is had again.
 */
export class LinkWorker {
  private running = false;
  private life: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  link: CarrierLink | null = null;
  /** Where the bind slot stands: not looked for yet, all held by others, ours, or not found out. */
  private slot: "starting" | "standby" | "held" | "failed" = "starting";
  /** While standing by: whether a holder elsewhere says it is bound. */
  private upElsewhere = false;

  constructor(private readonly deps: LinkWorkerDeps) {}

  get name(): string {
    return this.deps.link;
  }

  /** For readiness: bound, standing by (others hold every slot), or neither. */
  get bindState(): BindState {
    if (!this.running) return "stopped";
    if (this.slot === "held") return this.link?.session.state === "bound" ? "bound" : "unbound";
    if (this.slot === "standby") return "standby";
    return this.slot === "failed" ? "unbound" : "starting";
  }

  /**
   * Down, for routing: ours and down (breaker open, or failing to bind), or held by others none
   * of whom is bound. A link still starting, or up anywhere, is not down.
   */
  get down(): boolean {
    if (this.slot === "held") return this.link?.down ?? false;
    if (this.slot === "standby") return !this.upElsewhere;
    return false;
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
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = null;
  }

  private async live(): Promise<void> {
    const { config, link, settings, logger } = this.deps;
    const slot = new BindSlot(
      this.deps.pool,
      link,
      settings.max_binds,
      this.deps.owner,
      config.BIND_LEASE_SECONDS,
    );
    const leaseMs = config.BIND_LEASE_SECONDS * 1000;
    while (this.running) {
      const taken = await slot.acquire().catch((err) => {
        logger.error({ err, link }, "bind slot lookup failed");
        return undefined;
      });
      if (taken === null || taken === undefined) {
        this.slot = taken === null ? "standby" : "failed";
        if (taken === null) this.upElsewhere = await slot.boundElsewhere().catch(() => this.upElsewhere);
        // Often enough that a dead holder's slot is taken within a few seconds of its lease's end.
        await this.idle(jittered(leaseMs / 5));
        continue;
      }
      this.slot = "held";
      logger.info({ link, slot: taken }, "bind slot held");
      await this.serve(slot);
      await slot.release().catch(() => {});
    }
  }

  /** Runs the link and its dispatchers until stopped or the slot's lease is lost. */
  private async serve(slot: BindSlot): Promise<void> {
    const { config, link: name, settings, logger, pool, boss, transact, metrics, tally } = this.deps;
    // Shared by the session, which counts its submits written and answered, and the receipts,
    // which may wait for answers still to come.
    const unanswered = new UnansweredSubmits();
    const receipts = new ReceiptStage({
      unanswered,
      transact,
      link: name,
      settings,
      // A receipt may come as late as the longest validity the SMSC was given: a send's own
      // validity_period can be longer than the configured one.
      validityHours: Math.max(config.MESSAGE_VALIDITY_HOURS, VALIDITY_PERIOD_MAX / 3600),
      logger,
      metrics,
      tally,
    });
    const inbound = new InboundStage(name, {
      pool,
      boss,
      transact,
      logger,
      metrics,
      repeatWindowSeconds: config.INBOUND_REPEAT_WINDOW_SECONDS,
      dispatchBatchSize: config.DISPATCH_BATCH_SIZE,
      maxSegments: config.MAX_SEGMENTS,
    });
    const link = new CarrierLink(name, settings, {
      logger,
      pacer: pacerForBind(settings.tps_limit, settings.max_binds),
      breaker: {
        errorThresholdPercentage: config.BREAKER_ERROR_PERCENT,
        volumeThreshold: config.BREAKER_VOLUME_THRESHOLD,
        resetTimeoutMs: config.BREAKER_RESET_MS,
        rollingCountTimeoutMs: config.BREAKER_WINDOW_MS,
        clock: this.deps.breakerClock,
      },
      onDeliverSm: (pdu: DeliverSm) => {
        if (pdu.isReceipt) return receipts.take(pdu);
        // The inbound upkeep keeps its own pace while this part's message may need it.
        this.deps.signals.wake(INBOUND_TOPIC);
        return inbound.take(pdu);
      },
      onStateChange: (state) => metrics.sessionBound.set({ link: name }, state === "bound" ? 1 : 0),
      onLinkEvent: (event, reason) => metrics.smppLinkEvents.inc({ link: name, event, reason }),
      onRefusedPdu: (command) => metrics.smppRefusedPdus.inc({ link: name, command }),
      onBreakerChange: (state) =>
        metrics.breakerState.set({ link: name }, state === "closed" ? 0 : state === "half_open" ? 1 : 2),
      unanswered,
    });
    const dispatchers = this.deps.operators.map(
      (operator) =>
        new Dispatcher({
          operator,
          pool,
          boss,
          transact,
          link,
          serving: () => this.deps.serves(operator, name),
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
          idlePollMs: config.IDLE_POLL_MS,
          signals: this.deps.signals,
          lockSeconds: config.DISPATCH_LOCK_SECONDS,
          jobHeartbeatSeconds: config.DISPATCH_JOB_HEARTBEAT_SECONDS,
          validityHours: config.MESSAGE_VALIDITY_HOURS,
          maxUnansweredSends: config.DISPATCH_MAX_UNANSWERED_SENDS,
          maxRefusals: config.DISPATCH_MAX_REFUSALS,
        }),
    );
    this.link = link;
    metrics.breakerState.set({ link: name }, 0);
    link.start();
    for (const d of dispatchers) d.start();
    // The process's BindLeases renews the slot with the others, saying whether we are bound,
    // until stopped or the lease is lost.
    let lost = false;
    const ended = new Promise<void>((resolve) => {
      this.wake = resolve;
      if (!this.running) resolve();
    });
    const unkept = this.deps.leases.keep(
      slot,
      () => link.session.state === "bound" && !link.down,
      () => {
        lost = true;
        this.wake?.();
      },
    );
    await ended;
    this.wake = null;
    unkept();
    if (lost) logger.error({ link: name }, "bind slot lease lost: unbinding");
    await Promise.all(dispatchers.map((d) => d.stop()));
    await link.close();
    await receipts.flush();
    this.link = null;
    metrics.sessionBound.set({ link: name }, 0);
    metrics.breakerState.set({ link: name }, 0); // not serving it: no breaker of ours is open
    await sleep(0);
  }
}
