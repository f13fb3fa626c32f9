/**
 * One session's submits written and not yet answered, by serial: each takes the next serial as it
 * is written, and is done once answered or given up (timed out, its connection lost). The frontier
 * is the oldest serial not done. A receipt that names no segment this process holds may be for a
 * submit whose answer has not come yet (an SMSC that sends the receipt first): it notes the serial
 * at its arrival (`mark`) and waits, if need be, for the frontier to pass it. The submits written
 * after its arrival are not waited for, so a busy link never holds a receipt for longer than one
 * answer's timeout. O(1) per submit and per receipt (amortised); a receipt that arrives while no
 * submit is unanswered allocates nothing.
 */
export class UnansweredSubmits {
  /** The serial the next submit written takes. */
  private next = 0;
  /** The oldest serial not yet done; `next` when every submit written is done. */
  private frontier = 0;
  /** Done serials past the frontier (answered out of order). */
  private readonly doneAhead = new Set<number>();
  /** Receipts waiting, in the order they asked; each until the frontier reaches its mark. */
  private readonly waiters: { mark: number; resume: () => void }[] = [];
  private head = 0;

  /** A submit was written: its serial, to be passed to `done`. */
  written(): number {
    return this.next++;
  }

  /** The submit is answered or given up. */
  done(serial: number): void {
    if (serial !== this.frontier) {
      this.doneAhead.add(serial);
      return;
    }
    this.frontier++;
    while (this.doneAhead.delete(this.frontier)) this.frontier++;
    this.resumeWaiters();
  }

  /** What a receipt arriving now waits for: every submit written so far. */
  mark(): number {
    return this.next;
  }

  /**
   * Resolves once every submit written before `mark` is answered or given up; null when every one
   * already is. Marks taken in arrival order are to be asked in that order.
   */
  doneBefore(mark: number): Promise<void> | null {
    if (this.frontier >= mark) return null;
    return new Promise((resume) => this.waiters.push({ mark, resume }));
  }

  private resumeWaiters(): void {
    const { waiters } = this;
    while (this.head < waiters.length) {
      const waiter = waiters[this.head];
      if (!waiter || waiter.mark > this.frontier) break;
      this.head++;
      waiter.resume();
    }
    if (this.head === waiters.length) {
      waiters.length = 0;
      this.head = 0;
    } else if (this.head > 1_024 && this.head * 2 > waiters.length) {
      waiters.splice(0, this.head);
      this.head = 0;
    }
  }
}
