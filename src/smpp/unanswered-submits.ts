/**
 * One session's submits written and not yet answered, by serial: each takes the next serial as it
 * is written, and is done once answered or given up (timed out, its connection lost). The frontier
 * is the oldest serial not done. A receipt that names no segment this process holds may be for a
 * submit whose answer has not come yet (an SMSC that sends the receipt first): it notes the serial
 * at its arrival (`mark`) and waits, if need be, for the frontier to pass it, or for `maxWaitMs`,
 * whichever comes first. An SMSC that sends a receipt ahead of its answer sends it milliseconds
 * ahead; one answer that never comes must not hold every receipt behind it for a response timeout
 * (their deliver_sm_resp withheld, which an SMSC may take as a reason to resend or unbind). The
 * submits written after a receipt's arrival are not waited for. O(1) per submit and per receipt
 * (amortised), one timer at most; a receipt that arrives while no submit is unanswered allocates
 * nothing.
 */
export class UnansweredSubmits {
  /** The serial the next submit written takes. */
  private next = 0;
  /** The oldest serial not yet done; `next` when every submit written is done. */
  private frontier = 0;
  /** Done serials past the frontier (answered out of order). */
  private readonly doneAhead = new Set<number>();
  /** Receipts waiting, in the order they asked; each until the frontier reaches its mark or its deadline. */
  private readonly waiters: { mark: number; deadline: number; resume: () => void }[] = [];
  private head = 0;
  /** Set while a waiter's deadline is to be looked at. */
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly maxWaitMs = MAX_WAIT_MS) {}

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
    return new Promise((resume) => {
      this.waiters.push({ mark, deadline: Date.now() + this.maxWaitMs, resume });
      this.arm();
    });
  }

  /** A timer for the oldest waiter's deadline, unless one is set (it re-arms when it fires). */
  private arm(): void {
    const first = this.waiters[this.head];
    if (this.timer !== undefined || first === undefined) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.resumeWaiters();
      },
      Math.max(0, first.deadline - Date.now()),
    );
    this.timer.unref();
  }

  private resumeWaiters(): void {
    const { waiters } = this;
    if (this.head === waiters.length) return;
    const now = Date.now();
    while (this.head < waiters.length) {
      const waiter = waiters[this.head];
      // Deadlines come in the order of the marks: the first still due to wait stops the rest.
      if (!waiter || (waiter.mark > this.frontier && waiter.deadline > now)) break;
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
    this.arm();
  }
}

/** The longest a receipt waits for the answers before it: many times a loopback or LAN round trip. */
const MAX_WAIT_MS = 500;
