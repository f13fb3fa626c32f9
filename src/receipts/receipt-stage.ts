import type { Operator, SmppSettings } from "../../carriers/index.ts";
import type { Transact } from "../db/pool.ts";
import { refreshDelivery } from "../lifecycle/index.ts";
import { type Logger, receiptForLog } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { every } from "../periodic.ts";
import type { DeliverSm } from "../smpp/session.ts";
import { type ApplyResult, applyEarlyReceipts, sweepEarlyReceipts } from "./apply-receipts.ts";
import { type HeldReceipts, ReceiptRegistry } from "./held-receipts.ts";
import { type Receipt, readReceipt } from "./read-receipt.ts";
import { ReceiptBatcher } from "./receipt-batcher.ts";

/**
 * One operator link's receipts, a stage of its own: fed by the SMPP session's deliver_sm, it reads
 * each receipt in the carrier's dialect, hands it to the dispatch batch that holds its segment (if
 * one of ours does), else applies it in a batched transaction. Dispatch only tells it which segments
 * a batch has and when they are recorded; receipts that came before that are matched then.
 */
export class ReceiptStage {
  private readonly registry = new ReceiptRegistry();
  private readonly batcher: ReceiptBatcher;

  constructor(
    private readonly deps: {
      /** Opens the stage's transactions (the worker's put their callback events in jobs at once). */
      transact: Transact;
      operator: Operator;
      settings: SmppSettings;
      validityHours: number;
      logger: Logger;
      metrics: Metrics;
    },
  ) {
    this.batcher = new ReceiptBatcher(deps.transact, deps.operator, {
      maxBatch: 500,
      maxDelayMs: 10,
      onApplied: (applied) => {
        this.observe(applied);
        recheckLater(deps.transact, applied.notYetAccepted, (delivered) =>
          this.observe({ delivered, duplicates: 0 }),
        );
      },
    });
  }

  /** A deliver_sm that is a receipt; settles once the receipt is committed (then it is acknowledged). */
  async take(pdu: DeliverSm): Promise<void> {
    const { operator, settings, metrics, logger } = this.deps;
    const read = readReceipt(pdu, settings, { validityHours: this.deps.validityHours });
    if (read.kind === "unreadable") {
      metrics.receipts.inc({ operator, state: "unreadable" });
      metrics.receiptsUnmatched.inc({ operator, reason: "unreadable" });
      logger.warn(
        {
          operator,
          reason: read.reason,
          receipted_message_id: pdu.tlvs.receipted_message_id?.slice(0, 80),
          text: receiptForLog(pdu.short_message),
        },
        "unreadable delivery receipt",
      );
      return;
    }
    metrics.receipts.inc({ operator, state: read.receipt.state });
    // The wait lets a submit_sm_resp that came in the same read register its segment first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await this.registry.deliver(read.receipt, this.apply);
  }

  /** The ordinary way: applied with the receipts around it in one transaction. */
  readonly apply = (receipt: Receipt): Promise<void> => this.batcher.add(receipt);

  /** A dispatch batch of ours had this segment accepted: its receipt goes to that batch first. */
  hold(smscId: string, batch: HeldReceipts): void {
    this.registry.hold(smscId, batch);
  }

  /**
   * The segments are recorded (or their batch is over): their receipts no longer go to a batch.
   * Those that came before the segments were recorded are matched now rather than at the sweep,
   * and the messages' delivery is looked at once more: a receipt applied the ordinary way while
   * the batch's settle was open may have seen the message not yet `success`, and the settle may
   * not have seen that receipt. Not the messages in `delivered`, which the settle delivered: a
   * delivery is final.
   */
  async segmentsRecorded(
    parts: readonly { messageId: string; smscId: string }[],
    delivered: ReadonlySet<string> = new Set(),
  ): Promise<void> {
    const smscIds = parts.map((p) => p.smscId);
    this.registry.forget(smscIds);
    if (parts.length === 0) return;
    const { transact, operator, logger } = this.deps;
    const messageIds = [...new Set(parts.map((p) => p.messageId))].filter((id) => !delivered.has(id));
    await transact(async (tx) => [
      ...(await applyEarlyReceipts(tx, operator, smscIds)),
      ...(await refreshDelivery(tx, messageIds)),
    ]).then(
      (delivered) => this.observe({ delivered, duplicates: 0 }),
      (err: unknown) => logger.error({ err, operator }, "early receipts not applied (the sweep will)"),
    );
  }

  /** Delivery latencies of messages delivered elsewhere (in a dispatch batch's settle). */
  observe(applied: Pick<ApplyResult, "delivered" | "duplicates">): void {
    const { operator, metrics } = this.deps;
    for (const seconds of applied.delivered) metrics.deliveryLatency.observe({ operator }, seconds);
    if (applied.duplicates)
      metrics.receiptsUnmatched.inc({ operator, reason: "duplicate" }, applied.duplicates);
  }

  flush(): Promise<void> {
    return this.batcher.flush();
  }
}

/**
 * Early receipts whose segment has since been recorded by another process are applied, and those
 * still unmatched after the grace period are counted as unknown and dropped: every sweepMs.
 */
export function startEarlyReceiptSweep(deps: {
  transact: Transact;
  graceSeconds: number;
  sweepMs: number;
  logger: Logger;
  metrics: Metrics;
}): { stop(): Promise<void> } {
  return every(
    deps.sweepMs,
    async () => {
      const { unknown, notYetAccepted } = await deps.transact((tx) =>
        sweepEarlyReceipts(tx, deps.graceSeconds),
      );
      recheckLater(deps.transact, notYetAccepted, () => {});
      for (const r of unknown) {
        deps.logger.warn(r, "delivery receipt for an unknown message id");
        deps.metrics.receiptsUnknown.inc({ operator: r.operator });
        deps.metrics.receiptsUnmatched.inc({ operator: r.operator, reason: "unknown_id" });
      }
    },
    (err) => deps.logger.error({ err }, "early receipt sweep failed"),
  );
}

/** How long after a receipt met a message not yet accepted its delivery is looked at again. */
const RECHECK_MS = 1_000;

/**
 * A receipt applied while its message's settle was still open (the message not yet `success`)
 * cannot deliver it, and that settle may not have seen the receipt: a second look once the settle
 * has surely committed closes that gap. Nothing to do for most batches (an empty list).
 */
function recheckLater(
  transact: Transact,
  messageIds: readonly string[],
  onDelivered: (seconds: number[]) => void,
): void {
  if (messageIds.length === 0) return;
  setTimeout(() => {
    transact((tx) => refreshDelivery(tx, messageIds)).then(onDelivered, () => {});
  }, RECHECK_MS).unref();
}
