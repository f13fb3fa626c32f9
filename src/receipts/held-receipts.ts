import { numberCandidates, numberKey } from "../domain/smsc-id.ts";
import type { Receipt } from "./read-receipt.ts";

/**
 * Receipts for segments a dispatch batch of this process has submitted but not recorded yet.
 * A carrier often sends the receipt right behind the submit_sm_resp, before the batch's settle
 * transaction exists: rather than parking such a receipt in early_receipts and matching it later
 * (two more writes and a delay), the batch takes it and records the segment with its receipt in
 * its settle transaction. The deliver_sm is acknowledged when that transaction commits. A receipt
 * that comes once the batch has begun to settle goes the ordinary way once the settle is over.
 */
export class HeldReceipts {
  private sealed = false;
  private readonly taken: { receipt: Receipt; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private readonly settled: Promise<void>;
  private settle: () => void = () => {};

  constructor() {
    this.settled = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  /**
   * Takes the receipt into the batch while it has not begun to settle. Once it has, the receipt
   * waits for the settle to end and then goes the ordinary way (`ordinary`), which then finds its
   * segment recorded instead of parking the receipt as early.
   */
  take(receipt: Receipt, ordinary: (receipt: Receipt) => Promise<void>): Promise<void> {
    if (this.sealed) return this.settled.then(() => ordinary(receipt));
    return new Promise((resolve, reject) => this.taken.push({ receipt, resolve, reject }));
  }

  /**
   * A receipt that may name one of the batch's segments as the same number written another way:
   * it goes the ordinary way once the batch is over, when the database, which sees every recorded
   * segment, can match it by number, rather than being parked before the segment is recorded.
   */
  afterSettle(receipt: Receipt, ordinary: (receipt: Receipt) => Promise<void>): Promise<void> {
    return this.settled.then(() => ordinary(receipt));
  }

  /** The receipts taken so far (the batch goes on taking them). */
  takenSoFar(): Receipt[] {
    return this.taken.map((t) => t.receipt);
  }

  /** No more receipts are taken; returns those taken so far, for the settle transaction. */
  seal(): Receipt[] {
    this.sealed = true;
    return this.taken.map((t) => t.receipt);
  }

  /** The settle transaction committed with the taken receipts in it. */
  committed(): void {
    for (const t of this.taken) t.resolve();
    this.settle();
  }

  /**
   * The batch failed, before or in its settle: each receipt goes the ordinary way, and its
   * deliver_sm is answered by that. So does every receipt that comes after, for an id it still holds.
   */
  handOver(ordinary: (receipt: Receipt) => Promise<void>): void {
    this.sealed = true;
    for (const t of this.taken) ordinary(t.receipt).then(t.resolve, t.reject);
    this.settle();
  }
}

/**
 * Which batch holds each SMSC id this process has had accepted and not yet recorded: one registry
 * per operator link, shared by its dispatcher (which registers ids as submit_sm_resp arrive) and
 * its receipt handler (which offers each receipt to the holding batch first). On a tolerant link
 * a receipt that names no id exactly but may name one as a number (hex for decimal, say) waits
 * for that batch to be over: the number match itself is the database's (apply-receipts.ts), which
 * sees every recorded segment and refuses ids that could name two.
 */
export class ReceiptRegistry {
  private readonly byId = new Map<string, HeldReceipts>();
  private readonly byNumber = new Map<string, HeldReceipts>();

  constructor(private readonly tolerant: boolean) {}

  hold(smscId: string, batch: HeldReceipts): void {
    this.byId.set(smscId, batch);
    const key = this.tolerant ? numberKey(smscId) : null;
    if (key !== null) this.byNumber.set(key, batch);
  }

  forget(smscIds: Iterable<string>): void {
    for (const id of smscIds) {
      const batch = this.byId.get(id);
      this.byId.delete(id);
      const key = this.tolerant ? numberKey(id) : null;
      if (key !== null && this.byNumber.get(key) === batch) this.byNumber.delete(key);
    }
  }

  /**
   * Hands the receipt to the batch that holds its segment, else to `unheld` at once (by default
   * the ordinary way).
   */
  deliver(
    receipt: Receipt,
    ordinary: (receipt: Receipt) => Promise<void>,
    unheld: (receipt: Receipt) => Promise<void> = ordinary,
  ): Promise<void> {
    const exact = this.byId.get(receipt.smscId);
    if (exact) return exact.take(receipt, ordinary);
    const byNumber = this.byNumber.size > 0 ? this.holderByNumber(receipt.smscId) : undefined;
    return byNumber ? byNumber.afterSettle(receipt, ordinary) : unheld(receipt);
  }

  private holderByNumber(smscId: string): HeldReceipts | undefined {
    for (const { key } of numberCandidates(smscId)) {
      const batch = this.byNumber.get(key);
      if (batch) return batch;
    }
    return undefined;
  }
}

/**
 * Of several receipts for one segment, the one that says most: DELIVRD, then any final state, then
 * an intermediate one; ties go by content (state, then an err code over none), never by arrival,
 * as applyReceipts decides them.
 */
export function mostTelling(
  receipts: readonly Receipt[],
  finalStates: ReadonlySet<string>,
): Map<string, Receipt> {
  const rank = (r: Receipt) => (r.state === "DELIVRD" ? 0 : finalStates.has(r.state) ? 1 : 2);
  const better = (a: Receipt, b: Receipt) =>
    rank(a) !== rank(b)
      ? rank(a) < rank(b)
      : a.state !== b.state
        ? a.state < b.state
        : (a.err ?? null) !== null && (b.err ?? null) === null;
  const best = new Map<string, Receipt>();
  for (const r of receipts) {
    const held = best.get(r.smscId);
    if (!held || better(r, held)) best.set(r.smscId, r);
  }
  return best;
}
