import { randomUUID } from "node:crypto";
import type { Operator } from "../../carriers/index.ts";
import type { Pool } from "../db/pool.ts";
import { extendLease } from "../lifecycle/index.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";

/**
 * A dispatch batch's lease on the messages it claimed: its owner id, renewed every third of the
 * lease while the batch runs (touching the batch's jobs in the same beat, so pg-boss's job
 * heartbeat and the messages' hold stop together when the worker dies, and both are short because
 * they are renewed), and the batch's answer to "is this message still mine to submit?".
 *
 * A message stops being the batch's when a renewal finds another run holding it (the lease ran
 * out — a stalled process, a database slower than the lease — and another run claimed it), or
 * when no renewal has succeeded for a whole lease (the database unreachable, the event loop
 * stalled): another run may have claimed it meanwhile. Either is logged and counted in
 * `shiri_dispatch_leases_lost_total`, and from then on the batch withdraws the message's submits
 * not yet on the wire; its settle is fenced by the owner (lifecycle/outcomes.ts), so it moves
 * nothing another run holds, while the segments the carrier did accept are recorded all the same.
 */
export class BatchLease {
  readonly owner = randomUUID();
  private readonly lost = new Set<string>();
  /** Messages whose number opted out while the batch held them: still ours, but sent no further. */
  private readonly optedOut = new Set<string>();
  private messageIds: readonly string[] = [];
  private readonly lockMs: number;
  /** By this process's clock, the lease surely holds until then (renewals count from their start). */
  private heldUntil: number;
  private lapsed = false;
  private judging = true;
  private renewing = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: {
      pool: Pool;
      operator: Operator;
      logger: Logger;
      metrics: Metrics;
      lockSeconds: number;
      /** The batch's jobs' heartbeat: touched on every renewal, at least this often. */
      jobs?: { touch: () => Promise<void>; heartbeatSeconds: number };
    },
  ) {
    this.lockMs = options.lockSeconds * 1_000;
    // Taken before the claim, so the lease is never thought longer than the database's.
    this.heldUntil = Date.now() + this.lockMs;
  }

  get lockSeconds(): number {
    return this.options.lockSeconds;
  }

  /** Starts renewing the lease on the messages the claim took (and touching the batch's jobs). */
  keep(messageIds: readonly string[]): void {
    if (this.timer) return;
    this.messageIds = messageIds;
    const heartbeatMs = (this.options.jobs?.heartbeatSeconds ?? Number.POSITIVE_INFINITY) * 1_000;
    this.timer = setInterval(() => void this.renew(), Math.min(this.lockMs, heartbeatMs) / 3);
  }

  /**
   * Renews at once, rather than at the next beat: an opt-out was announced, and the renewal tells
   * which of the batch's messages its number has opted out of since the claim.
   */
  renewNow(): void {
    if (this.timer) void this.renew();
  }

  /** Whether the batch may still put the message's segments on the wire. */
  owns(messageId: string): boolean {
    if (!this.lapsed && this.judging && Date.now() >= this.heldUntil) {
      this.lapsed = true;
      this.options.logger.error(
        { operator: this.options.operator, lockSeconds: this.options.lockSeconds },
        "dispatch lease not renewed within its length: the batch's unsent submits are withdrawn",
      );
    }
    if (this.lapsed && !this.lost.has(messageId)) this.noteLost([messageId], "lapsed");
    return !this.lapsed && !this.lost.has(messageId) && !this.optedOut.has(messageId);
  }

  /** The settle begins: renewals go on (a settle waiting out an outage keeps its lease) but judge nothing. */
  settling(): void {
    this.judging = false;
  }

  /** The settle found these held by another run: counted, unless already known lost. */
  lostAtSettle(messageIds: readonly string[]): void {
    const fresh = messageIds.filter((id) => !this.lost.has(id));
    if (fresh.length === 0) return;
    this.noteLost(fresh, "settle");
    this.options.logger.warn(
      { operator: this.options.operator, messages: fresh.length },
      "dispatch lease lost: the settle left messages to the run that holds them",
    );
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async renew(): Promise<void> {
    const { messageIds } = this;
    if (this.renewing) return;
    this.renewing = true;
    const { pool, operator, logger, metrics } = this.options;
    const startedAt = Date.now();
    this.options.jobs
      ?.touch()
      .catch((err: unknown) => logger.warn({ err, operator }, "dispatch jobs not touched"));
    try {
      if (messageIds.length === 0) return;
      const { kept, optedOut } = await extendLease(pool, messageIds, {
        owner: this.owner,
        lockSeconds: this.lockSeconds,
      });
      this.heldUntil = startedAt + this.lockMs;
      // Their unsent submits are withdrawn; the settle fails them OPTED_OUT (optedOutAmong).
      for (const id of optedOut) this.optedOut.add(id);
      // Once the settle runs, its own moves end the lease: nothing is judged from them.
      if (!this.judging) return;
      const taken = messageIds.filter((id) => !kept.has(id) && !this.lost.has(id));
      if (taken.length > 0) {
        this.noteLost(taken, "taken");
        logger.error(
          { operator, messages: taken.length },
          "dispatch lease lost: messages taken by another run; their unsent submits are withdrawn",
        );
      }
    } catch (err) {
      metrics.leaseRenewalsFailed.inc({ operator });
      logger.error({ err, operator }, "dispatch lease not extended");
    } finally {
      this.renewing = false;
    }
  }

  private noteLost(messageIds: readonly string[], reason: "taken" | "lapsed" | "settle"): void {
    for (const id of messageIds) this.lost.add(id);
    this.options.metrics.leasesLost.inc({ operator: this.options.operator, reason }, messageIds.length);
  }
}
