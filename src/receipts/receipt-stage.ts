import type { SmppSettings } from "../../carriers/index.ts";
import type { Transact } from "../db/pool.ts";
import { stateLabel } from "../domain/receipt-states.ts";
import { type Delivery, refreshDelivery, stillBeingAccepted } from "../lifecycle/index.ts";
import { type Logger, receiptForLog } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { paced } from "../periodic.ts";
import { EARLY_RECEIPTS_TOPIC, type WorkSignals } from "../queue/wakeups.ts";
import type { DeliverSm } from "../smpp/session.ts";
import type { UnansweredSubmits } from "../smpp/unanswered-submits.ts";
import { type ApplyResult, applyEarlyReceipts, type Matching, sweepEarlyReceipts } from "./apply-receipts.ts";
import { type HeldReceipts, ReceiptRegistry } from "./held-receipts.ts";
import type { IdTally } from "./id-tally.ts";
import { type Receipt, readReceipt } from "./read-receipt.ts";
import { ReceiptBatcher } from "./receipt-batcher.ts";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * How a link's receipts are matched: tolerantly (exact id, then the same number written another
 * way) unless an explicit "string" id format asks for exact matching only.
 */
export function matchingFor(
  settings: Pick<SmppSettings, "id_format_submit" | "id_format_receipt">,
): Matching {
  return { tolerant: settings.id_format_submit !== "string" && settings.id_format_receipt !== "string" };
}

/**
 * One link's receipts, a stage of its own: fed by the SMPP session's deliver_sm (on any of the
 * link's binds), it reads each receipt in the carrier's dialect, hands it to the dispatch batch
 * that holds its segment (if one of ours does), else applies it in a batched transaction. Dispatch
 * only tells it which segments a batch has and when they are recorded; receipts that came before
 * that are matched then.
 */
export class ReceiptStage {
  private readonly registry: ReceiptRegistry;
  private readonly batcher: ReceiptBatcher;
  private readonly matching: Matching;

  constructor(
    private readonly deps: {
      /** Opens the stage's transactions (the worker's put their callback events in jobs at once). */
      transact: Transact;
      link: string;
      settings: SmppSettings;
      /** A receipt names only segments accepted this long ago at most (and an hour of slack). */
      validityHours: number;
      logger: Logger;
      metrics: Metrics;
      tally: IdTally;
      /**
       * The link's submits (in this process) written and not yet answered: a receipt no batch
       * holds waits for those written before it came.
       */
      unanswered?: UnansweredSubmits;
    },
  ) {
    this.matching = {
      ...matchingFor(deps.settings),
      crossBase: (relation) => deps.tally.hasShown(deps.link, relation),
    };
    this.registry = new ReceiptRegistry(this.matching.tolerant);
    this.batcher = new ReceiptBatcher(deps.transact, deps.link, this.matching, {
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
    const { link, settings, metrics, logger } = this.deps;
    const mark = this.deps.unanswered?.mark() ?? 0;
    const read = readReceipt(pdu, settings, { validityHours: this.deps.validityHours });
    if (read.kind === "unreadable") {
      metrics.receipts.inc({ link, state: "unreadable" });
      metrics.receiptsUnmatched.inc({ link, reason: "unreadable" });
      logger.warn(
        {
          link,
          reason: read.reason,
          receipted_message_id: pdu.tlvs.receipted_message_id?.slice(0, 80),
          text: receiptForLog(pdu.short_message),
        },
        "unreadable delivery receipt",
      );
      return;
    }
    // The wait lets a submit_sm_resp that came in the same read register its segment first.
    await nextTurn();
    await this.registry.deliver(read.receipt, this.apply, (receipt) => this.afterAnswers(receipt, mark));
    // Counted once applied: a receipt refused (not applied) is sent again by the SMSC, and would
    // otherwise count at every try.
    metrics.receipts.inc({ link, state: stateLabel(read.receipt.state) });
  }

  /**
   * A receipt no batch of ours holds. While submits written before it came are unanswered, it may
   * be for one of them (an SMSC that sends the receipt before the submit_sm_resp): the ordinary way
   * now would match an older segment with the same id (a counter that restarted). It waits for
   * those answers (or their timeouts), and is offered to the batches again before going that way.
   */
  private async afterAnswers(receipt: Receipt, mark: number): Promise<void> {
    const answered = this.deps.unanswered?.doneBefore(mark);
    if (!answered) return this.apply(receipt);
    await answered;
    // As above: the answer's batch registers its segment before the receipt is offered again.
    await nextTurn();
    return this.registry.deliver(receipt, this.apply);
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
    const { transact, link, logger } = this.deps;
    const messageIds = [...new Set(parts.map((p) => p.messageId))].filter((id) => !delivered.has(id));
    await transact(async (tx) => {
      const early = await applyEarlyReceipts(tx, link, smscIds, this.matching);
      return { ...early, delivered: [...early.delivered, ...(await refreshDelivery(tx, messageIds))] };
    }).then(
      (applied) => this.observe(applied),
      (err: unknown) => logger.error({ err, link }, "early receipts not applied (the sweep will)"),
    );
  }

  /**
   * Delivery latencies of the messages delivered, duplicates, and, when given, how the receipts'
   * ids named their segments and those that could name two (never guessed: counted and logged).
   */
  observe(applied: Pick<ApplyResult, "delivered" | "duplicates"> & Partial<ApplyResult>): void {
    observeApplied(this.deps, this.deps.link, applied);
  }

  flush(): Promise<void> {
    return this.batcher.flush();
  }
}

function observeApplied(
  deps: { metrics: Metrics; logger: Logger; tally: IdTally },
  link: string,
  applied: Pick<ApplyResult, "delivered" | "duplicates"> & Partial<ApplyResult>,
): void {
  const { metrics, logger, tally } = deps;
  for (const d of applied.delivered) metrics.deliveryLatency.observe({ operator: d.operator }, d.seconds);
  if (applied.early) metrics.receiptsEarly.inc({ link }, applied.early);
  if (applied.duplicates) metrics.receiptsUnmatched.inc({ link, reason: "duplicate" }, applied.duplicates);
  if (applied.relations) tally.add(link, applied.relations, applied.shown);
  if (applied.ambiguous && applied.ambiguous.length > 0) {
    metrics.receiptsUnmatched.inc({ link, reason: "ambiguous" }, applied.ambiguous.length);
    logger.warn(
      { link, smsc_ids: applied.ambiguous.slice(0, 10).map((id) => id.slice(0, 80)) },
      "delivery receipts whose id could name two segments: not applied",
    );
  }
}

/**
 * Early receipts whose segment has since been recorded by another process are applied, and those
 * still unmatched after the grace period are counted as unknown and dropped: every sweepMs while
 * early receipts are being kept, every idleSweepMs otherwise.
 */
export function startEarlyReceiptSweep(deps: {
  transact: Transact;
  graceSeconds: number;
  sweepMs: number;
  logger: Logger;
  metrics: Metrics;
  tally: IdTally;
  links: Readonly<Record<string, SmppSettings>>;
  /** Idle (no early receipt kept lately), it sweeps this often instead of every sweepMs. */
  idleSweepMs: number;
  /** Early receipts kept by any worker are announced here: the sweep wakes. */
  signals: WorkSignals;
}): { stop(): Promise<void> } {
  const matchingOf = (link: string): Matching => {
    const settings = deps.links[link];
    if (!settings) return { tolerant: false };
    return { ...matchingFor(settings), crossBase: (relation) => deps.tally.hasShown(link, relation) };
  };
  const tolerantLinks = Object.keys(deps.links).filter((link) => matchingOf(link).tolerant);
  const sweep = paced(
    { busyMs: deps.sweepMs, idleMs: Math.max(deps.sweepMs, deps.idleSweepMs), awakeMs: EARLY_AWAKE_MS },
    async () => {
      const { unknown, results } = await deps.transact((tx) =>
        sweepEarlyReceipts(tx, deps.graceSeconds, matchingOf, deps.tally.linksShowing(tolerantLinks)),
      );
      for (const { link, result } of results) {
        observeApplied(deps, link, result);
        recheckLater(deps.transact, result.notYetAccepted, () => {});
      }
      for (const r of unknown) {
        deps.logger.warn(r, "delivery receipt for an unknown message id");
        deps.metrics.receiptsUnknown.inc({ link: r.link });
        deps.metrics.receiptsUnmatched.inc({ link: r.link, reason: "unknown_id" });
      }
      return results.length > 0 || unknown.length > 0;
    },
    (err) => deps.logger.error({ err }, "early receipt sweep failed"),
  );
  const stopListening = deps.signals.on(EARLY_RECEIPTS_TOPIC, () => sweep.wake());
  return {
    async stop() {
      stopListening();
      await sweep.stop();
    },
  };
}

/**
 * How long after an early receipt was kept the sweep stays at its busy pace: its segments are
 * recorded within a batch's settle, seconds at most.
 */
const EARLY_AWAKE_MS = 30_000;

/** How long after a receipt met a message not yet accepted its delivery is first looked at again. */
const RECHECK_MS = 1_000;

/** Looks again at most this many times, each wait twice the last (1 + 2 + … + 32 s: about a minute). */
const RECHECKS = 6;

/**
 * A receipt applied while its message's settle was still open (the message not yet `success`)
 * cannot deliver it, and that settle may not have seen the receipt (its look at delivery ran before
 * the receipt committed): another look once the settle has committed closes that gap. A settle
 * can take longer than one wait (a big batch on a busy database), so the messages still being
 * accepted, and those a failed look left, are looked at again, until they are accepted or the
 * looks run out; a message given back to the queue is looked at by the settle that accepts it.
 * Nothing to do for most batches (an empty list).
 */
export function recheckLater(
  transact: Transact,
  messageIds: readonly string[],
  onDelivered: (delivered: Delivery[]) => void,
  waitMs = RECHECK_MS,
  looksLeft = RECHECKS,
): void {
  if (messageIds.length === 0 || looksLeft === 0) return;
  const again = (ids: readonly string[]) =>
    recheckLater(transact, ids, onDelivered, waitMs * 2, looksLeft - 1);
  setTimeout(() => {
    // Which are still being accepted first, then the look: a settle that commits between the two
    // statements is seen by the look, and one that commits after it leaves the message pending.
    transact(async (tx) => {
      const pending = await stillBeingAccepted(tx, messageIds);
      return { pending, delivered: await refreshDelivery(tx, messageIds) };
    }).then(
      ({ delivered, pending }) => {
        onDelivered(delivered);
        again(pending);
      },
      () => again(messageIds),
    );
  }, waitMs).unref();
}
