import type { SubmitPacer } from "../smpp/session.ts";

/*
 * Pacing submits to the carrier's TPS limit: not a rate limit, which in Shiri means only the
 * API's quotas (src/limits), nor throttling, which is the carrier's ESME_RTHROTTLED answer
 * (docs/decisions/0010). It implements src/smpp's SubmitPacer interface.
 */

/** A second, plus 5 ms for timers that fire early and for the carrier's clock rounding to the ms. */
const SLOT_REUSE_MS = 1005;

/**
 * At most `perSecond` PDUs in any one second as the carrier counts them, which is by arrival.
 * A PDU's slot is reused one second after the carrier *answered* it: the answer comes after
 * the arrival, so however the network or either side's event loop delays a PDU, the next one
 * on its slot cannot reach the carrier within a second of it. Dating slots by when they were
 * sent instead lets that jitter squeeze L + 1 PDUs into one of the carrier's seconds. The cost
 * is one round trip per slot per second: the rate is L × 1 s / (1 s + round trip).
 */
export class TpsPacer implements SubmitPacer {
  /** Per slot: when the carrier answered its last PDU. */
  private readonly answeredAt: number[];
  /** Per slot: settles when its PDU on the wire is answered (or given up). */
  private readonly answered: Promise<void>[];
  private next = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!Number.isInteger(perSecond) || perSecond <= 0)
      throw new RangeError("perSecond must be a positive integer");
    this.answeredAt = new Array<number>(perSecond).fill(Number.NEGATIVE_INFINITY);
    this.answered = new Array<Promise<void>>(perSecond).fill(Promise.resolve());
  }

  /** Callers are served in order; the returned function is called once the PDU is answered. */
  acquire(): Promise<() => void> {
    const turn = this.queue.then(async () => {
      const slot = this.next;
      this.next = (slot + 1) % this.perSecond;
      await this.answered[slot];
      const wait = (this.answeredAt[slot] as number) + SLOT_REUSE_MS - this.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
      let settle = () => {};
      this.answered[slot] = new Promise<void>((resolve) => {
        settle = () => {
          this.answeredAt[slot] = this.now();
          resolve();
        };
      });
      let once = false;
      return () => {
        if (once) return;
        once = true;
        settle();
      };
    });
    this.queue = turn.catch(() => {});
    return turn;
  }
}

/** A carrier without a TPS limit: no pacing. */
export const NO_PACING: SubmitPacer = { acquire: async () => () => {} };

/**
 * The share of an operator's TPS one bind may use: the limit is the carrier's across all our
 * binds, so with `maxBinds` slots each bind gets an equal share and the total never exceeds it.
 */
export function pacerForBind(tpsLimit: number, maxBinds: number): SubmitPacer {
  if (tpsLimit <= 0) return NO_PACING;
  return new TpsPacer(Math.max(1, Math.floor(tpsLimit / maxBinds)));
}
