import { EventEmitter } from "node:events";

/** The buckets of a breaker's rolling window (opossum's default), each window/buckets long. */
export const BREAKER_BUCKETS = 10;

/**
 * Turns the rolling windows of every circuit breaker in a process (opossum's
 * `rotateBucketController`), and only while they hold something (docs/decisions/0011-idle-worker.md).
 * Left to itself, each breaker turns its window on a timer of its own, every bucket (a second by
 * default), traffic or not: one wake-up a second per link for an idle worker. Here one timer turns
 * them all, started by the first submit and stopped once a whole window has turned with no submit:
 * every bucket is empty then, and turning empty buckets changes nothing.
 */
export class BreakerClock {
  /** What the breakers listen to for the 'rotate' event. */
  readonly emitter = new EventEmitter();
  #timer: NodeJS.Timeout | null = null;
  /** Buckets turned since the last submit began or ended. */
  #quietTurns = 0;

  constructor(
    readonly bucketMs: number,
    readonly buckets = BREAKER_BUCKETS,
  ) {
    // One listener per breaker: a process with many links is not a leak.
    this.emitter.setMaxListeners(0);
  }

  /** A window of `windowMs` cut into `buckets`. */
  static forWindow(windowMs: number, buckets = BREAKER_BUCKETS): BreakerClock {
    return new BreakerClock(Math.max(1, Math.floor(windowMs / buckets)), buckets);
  }

  /** Whether the timer runs (for tests). */
  get turning(): boolean {
    return this.#timer !== null;
  }

  /** A submit began or ended: what it records must turn out of the window in time. */
  touch(): void {
    this.#quietTurns = 0;
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#turn(), this.bucketMs);
    this.#timer.unref();
  }

  #turn(): void {
    this.emitter.emit("rotate");
    if (++this.#quietTurns >= this.buckets) this.stop();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
