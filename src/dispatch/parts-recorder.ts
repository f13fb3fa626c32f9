import { type Pool, withTransaction } from "../db/pool.ts";
import { FINAL_STATES } from "../domain/receipt-states.ts";
import type { Logger } from "../logger.ts";
import type { HeldReceipts } from "../receipts/held-receipts.ts";
import { mostTelling } from "../receipts/held-receipts.ts";
import { type DispatchOutcome, recordParts } from "./settle.ts";

type AcceptedPart = DispatchOutcome["acceptedParts"][number];

/**
 * Records a batch's accepted segments as their answers arrive, a few milliseconds' worth at a time,
 * rather than only when the whole batch settles: if the worker dies mid-batch, what the carrier
 * had already accepted is on record and is not sent again. Only the segments answered in the last
 * flush interval, and those still on the wire, are left to the documented in-flight window. Each
 * flush also writes the receipts the batch already holds for its segments.
 */
export class PartsRecorder {
  private waiting: AcceptedPart[] = [];
  /** The receipt state each segment was recorded with (null: none yet), by SMSC id. */
  readonly written = new Map<string, string | null>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: {
      pool: Pool;
      link: string;
      logger: Logger;
      held: HeldReceipts;
      flushMs: number;
      maxParts: number;
      /** The batch's claim, on the database's clock: no submit of it went out earlier. */
      claimedAt: Date;
    },
  ) {}

  add(part: AcceptedPart): void {
    this.waiting.push(part);
    if (this.waiting.length >= this.options.maxParts) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.flushMs);
  }

  /** Writes what waits and resolves when every write so far has ended (the settle writes the rest). */
  async close(): Promise<void> {
    this.flush();
    await this.flushing;
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const parts = this.waiting;
    this.waiting = [];
    if (parts.length === 0) return;
    const { pool, link, logger, held, claimedAt } = this.options;
    const receiptFor = mostTelling(
      held.takenSoFar().filter((r) => r.scope !== "message"),
      FINAL_STATES,
    );
    // One write at a time, in order; a failed one is left to the settle, which records them all.
    this.flushing = this.flushing.then(() =>
      withTransaction(pool, (tx) => recordParts(tx, link, parts, receiptFor, claimedAt)).then(
        () => {
          for (const p of parts) this.written.set(p.smscId, receiptFor.get(p.smscId)?.state ?? null);
        },
        (err: unknown) =>
          logger.warn(
            { err, link, parts: parts.length },
            "accepted segments not recorded early (the settle will)",
          ),
      ),
    );
  }
}
