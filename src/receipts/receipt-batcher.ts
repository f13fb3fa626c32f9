import type { Transact } from "../db/pool.ts";
import { type ApplyResult, applyReceipts, type Matching } from "./apply-receipts.ts";
import type { Receipt } from "./read-receipt.ts";

/**
 * Gathers one link's receipts for a few milliseconds and applies them in one transaction,
 * so thousands of receipts a second are a few statements, not thousands. Each caller's promise
 * settles once its receipt is committed: the session acknowledges the deliver_sm only then,
 * and a failed batch makes the carrier send those receipts again.
 */
export class ReceiptBatcher {
  private pending: { receipt: Receipt; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly transact: Transact,
    private readonly link: string,
    private readonly matching: Matching,
    private readonly opts: {
      maxBatch: number;
      maxDelayMs: number;
      onApplied?: (r: ApplyResult) => void;
    },
  ) {}

  add(receipt: Receipt): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ receipt, resolve, reject });
      if (this.pending.length >= this.opts.maxBatch) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), this.opts.maxDelayMs);
    });
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    try {
      const result = await this.transact((tx) =>
        applyReceipts(
          tx,
          this.link,
          batch.map((b) => b.receipt),
          this.matching,
        ),
      );
      this.opts.onApplied?.(result);
      for (const b of batch) b.resolve();
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }
}
