import CircuitBreaker from "opossum";
import type { SmppSettings } from "../../carriers/index.ts";
import type { Logger } from "../logger.ts";
import { actionFor } from "../smpp/command-status.ts";
import type { LinkEvent, LinkLossReason } from "../smpp/link-events.ts";
import {
  type DeliverSm,
  type SessionState,
  SmppSession,
  type SubmitOptions,
  type SubmitOutcome,
  type SubmitPacer,
  type SubmitParams,
} from "../smpp/session.ts";
import type { UnansweredSubmits } from "../smpp/unanswered-submits.ts";
import { BreakerClock } from "./breaker-clock.ts";

/** A submit outcome, or the breaker's refusal to try while the carrier looks down. */
export type LinkOutcome = SubmitOutcome | { kind: "not_sent"; reason: "breaker_open" };

export interface BreakerSettings {
  /** Share of failed submits in the rolling window that opens the breaker. */
  errorThresholdPercentage: number;
  /** Fewest submits in the window before the breaker may open. */
  volumeThreshold: number;
  /** How long it stays open before a half-open probe. */
  resetTimeoutMs: number;
  rollingCountTimeoutMs: number;
  /**
   * Turns the rolling window of every breaker in the process, only while it holds submits (by
   * default one of the link's own: a timer each, always turning).
   */
  clock?: BreakerClock;
}

/** Thrown inside the breaker for an outcome that says the carrier, not the message, is in trouble. */
class CarrierTrouble extends Error {
  constructor(readonly outcome: SubmitOutcome) {
    super(outcome.kind === "response" ? `command_status ${outcome.command_status}` : outcome.reason);
  }
}

function isCarrierTrouble(outcome: SubmitOutcome): boolean {
  // Withdrawn by the dispatcher (its lease on the message was lost): says nothing of the carrier.
  if (outcome.kind === "not_sent" && outcome.reason === "withdrawn") return false;
  if (outcome.kind !== "response") return true;
  // Throttling is the carrier working as agreed; a permanent refusal is about the message.
  return actionFor(outcome.command_status) === "retry";
}

/**
 * One link's SMPP session (an account at a carrier or an aggregator) behind an opossum circuit
 * breaker. When the breaker opens, submits are refused at once (the dispatchers then stop taking
 * jobs over this link, and their operators fail over to their next link if they have one), so a
 * dead carrier costs nothing while the others keep flowing; a half-open probe closes it again.
 */
export class CarrierLink {
  readonly session: SmppSession;
  readonly breaker: CircuitBreaker<[SubmitParams, SubmitOptions?], SubmitOutcome>;
  private readonly clock: BreakerClock;
  /** When this link's carrier last accepted a submit (ms since the epoch; 0: never). */
  private lastAcceptedAt = 0;
  private readonly ownClock: boolean;

  constructor(
    readonly name: string,
    settings: SmppSettings,
    opts: {
      logger: Logger;
      pacer: SubmitPacer;
      breaker: BreakerSettings;
      onDeliverSm: (pdu: DeliverSm) => Promise<void>;
      onStateChange?: (state: SessionState) => void;
      onLinkEvent?: (event: LinkEvent, reason: LinkLossReason) => void;
      /** A request of the SMSC's refused as unsupported (data_sm, …), by command name. */
      onRefusedPdu?: (command: string) => void;
      onBreakerChange?: (state: "open" | "half_open" | "closed") => void;
      /** The session's submits written and not yet answered, shared with the link's receipts. */
      unanswered?: UnansweredSubmits;
    },
  ) {
    const logger = opts.logger.child({ link: name });
    this.session = new SmppSession({
      settings,
      logger,
      pacer: opts.pacer,
      onDeliverSm: opts.onDeliverSm,
      onStateChange: (state) => {
        logger.info({ state }, "smpp session state");
        opts.onStateChange?.(state);
      },
      ...(opts.onLinkEvent ? { onLinkEvent: opts.onLinkEvent } : {}),
      ...(opts.onRefusedPdu ? { onRefusedPdu: opts.onRefusedPdu } : {}),
      ...(opts.unanswered ? { unanswered: opts.unanswered } : {}),
    });
    this.clock = opts.breaker.clock ?? BreakerClock.forWindow(opts.breaker.rollingCountTimeoutMs);
    this.ownClock = opts.breaker.clock === undefined;
    this.breaker = new CircuitBreaker(
      async (params: SubmitParams, options?: SubmitOptions) => {
        const outcome = await this.session.submit(params, options);
        if (outcome.kind === "response" && outcome.command_status === 0) this.lastAcceptedAt = Date.now();
        if (isCarrierTrouble(outcome)) throw new CarrierTrouble(outcome);
        return outcome;
      },
      {
        timeout: false, // the session times each PDU out itself
        errorThresholdPercentage: opts.breaker.errorThresholdPercentage,
        volumeThreshold: opts.breaker.volumeThreshold,
        resetTimeout: opts.breaker.resetTimeoutMs,
        rollingCountTimeout: this.clock.bucketMs * this.clock.buckets,
        rollingCountBuckets: this.clock.buckets,
        rotateBucketController: this.clock.emitter,
        // Nobody reads the snapshots: computing the window's stats every bucket only costs.
        enableSnapshots: false,
      },
    );
    this.breaker.on("open", () => {
      logger.warn({}, "circuit breaker open: holding this link's messages");
      opts.onBreakerChange?.("open");
    });
    this.breaker.on("halfOpen", () => {
      logger.info({}, "circuit breaker half-open: probing");
      opts.onBreakerChange?.("half_open");
    });
    this.breaker.on("close", () => {
      logger.info({}, "circuit breaker closed");
      opts.onBreakerChange?.("closed");
    });
  }

  start(): void {
    this.session.start();
  }

  /**
   * Whether this link's carrier accepted a submit within the last `ms`: evidence that it is
   * working, so that a refusal is of the message, not a bad spell of the SMSC's.
   */
  acceptedWithin(ms: number): boolean {
    return Date.now() - this.lastAcceptedAt <= ms;
  }

  /**
   * Down: its breaker is open, or it is not bound and has failed to bind at least once (a refused
   * bind, a carrier that cannot be reached). A link still making its first bind is not down yet.
   */
  get down(): boolean {
    if (this.breaker.opened) return true;
    return this.session.state !== "bound" && this.session.failedBinds > 0;
  }

  async submit(params: SubmitParams, options: SubmitOptions = {}): Promise<LinkOutcome> {
    // The window turns while it holds this submit, from its start to its outcome.
    this.clock.touch();
    try {
      return await this.breaker.fire(params, options);
    } catch (err) {
      if (err instanceof CarrierTrouble) return err.outcome;
      if (err instanceof Error && "code" in err && err.code === "EOPENBREAKER") {
        return { kind: "not_sent", reason: "breaker_open" };
      }
      throw err;
    } finally {
      this.clock.touch();
    }
  }

  async close(): Promise<void> {
    await this.session.close();
    this.breaker.shutdown();
    if (this.ownClock) this.clock.stop();
  }
}
