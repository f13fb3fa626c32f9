import type { RateLimiter } from "../smpp/session.ts";

/**
 * One second plus a margin: the carrier counts at arrival, and loopback or network jitter can
 * bring two PDUs sent a second apart closer together there. Costs 1% of the allowed rate.
 */
const WINDOW_MS = 1010;

/**
 * At most `perSecond` PDUs in any sliding 1-second window: the carrier's TPS limit, never
 * exceeded, yet reached in steady state. It remembers the time of each of the last
 * `perSecond` sends; the next may go once the oldest of them is a second old.
 */
export class SlidingWindowLimiter implements RateLimiter {
  private readonly sent: number[];
  private next = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!Number.isInteger(perSecond) || perSecond <= 0)
      throw new RangeError("perSecond must be a positive integer");
    this.sent = new Array<number>(perSecond).fill(Number.NEGATIVE_INFINITY);
  }

  /** Callers are served in order; each PDU takes one slot. */
  acquire(pdus: number): Promise<void> {
    const turn = this.queue.then(async () => {
      for (let i = 0; i < pdus; i++) await this.takeOne();
    });
    this.queue = turn.catch(() => {});
    return turn;
  }

  private async takeOne(): Promise<void> {
    const oldest = this.sent[this.next] as number;
    const wait = oldest + WINDOW_MS - this.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
    this.sent[this.next] = this.now();
    this.next = (this.next + 1) % this.perSecond;
  }
}

/** A carrier without a TPS limit. */
export const UNLIMITED: RateLimiter = { acquire: async () => {} };

/**
 * The share of an operator's TPS one bind may use: the limit is the carrier's across all our
 * binds, so with `maxBinds` slots each bind gets an equal share and the total never exceeds it.
 */
export function limiterForBind(tpsLimit: number, maxBinds: number): RateLimiter {
  if (tpsLimit <= 0) return UNLIMITED;
  return new SlidingWindowLimiter(Math.max(1, Math.floor(tpsLimit / maxBinds)));
}
