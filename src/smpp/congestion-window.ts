/**
 * How many submits one session may have unanswered: a slow start after carrier throttling
 * (decision 0039). It starts at the link's window_size, its ceiling. A throttling answer
 * (ESME_RTHROTTLED, ESME_RMSGQFUL) cuts it to one, however far it had grown back; each accepted
 * answer adds one, up to the ceiling again. Every other answer leaves it as it is: a refusal of
 * the message says nothing about the carrier's load. Pure arithmetic; session.ts holds the slots.
 */

/** A change of the window's size, for the log; null when it stayed as it was. */
export type WindowChange = { from: number; to: number } | null;

export class CongestionWindow {
  private current: number;

  /** `ceiling`: the link's window_size, a whole number of at least one. */
  constructor(readonly ceiling: number) {
    if (!Number.isInteger(ceiling) || ceiling < 1) throw new RangeError(`window ceiling ${ceiling}`);
    this.current = ceiling;
  }

  /** Submits that may be unanswered at once now. */
  get size(): number {
    return this.current;
  }

  /** Whether it is cut below its ceiling (growing back after a throttle). */
  get reduced(): boolean {
    return this.current < this.ceiling;
  }

  /** A throttling answer: back to one submit at a time. */
  throttled(): WindowChange {
    return this.resize(1);
  }

  /** An accepted answer: one more, up to the ceiling. */
  accepted(): WindowChange {
    return this.resize(Math.min(this.ceiling, this.current + 1));
  }

  private resize(to: number): WindowChange {
    const from = this.current;
    if (to === from) return null;
    this.current = to;
    return { from, to };
  }
}
