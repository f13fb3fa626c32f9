/**
 * `ms` give or take a fifth, at random. Duties that start together with the same period would
 * otherwise run together for ever, each on a connection of its own: spread out, an idle process
 * runs them one after another on one (docs/decisions/0011-idle-worker.md).
 */
export function jittered(ms: number): number {
  return ms * (0.8 + 0.4 * Math.random());
}

/**
 * Runs `pass` every `intervalMs` or so (jittered), the first time after `firstMs` (by default an
 * interval), never two at once. A failed pass goes to `onError` and the next one runs as usual.
 * The timers do not keep the process alive; stop() waits for a pass under way.
 */
export function every(
  intervalMs: number,
  pass: () => Promise<unknown>,
  onError: (err: unknown) => void,
  options: { firstMs?: number } = {},
): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(turn, ms);
    timer.unref();
  };
  const turn = () => {
    running = pass()
      .then(
        () => {},
        (err: unknown) => onError(err),
      )
      .finally(() => {
        running = null;
        schedule(jittered(intervalMs));
      });
  };
  schedule(options.firstMs ?? jittered(intervalMs));
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/** A sleep that a wake() ends early; a wake() with nobody asleep makes the next sleep return at once. */
export class Waker {
  #pending = false;
  #wake: (() => void) | null = null;
  wake(): void {
    if (this.#wake) this.#wake();
    else this.#pending = true;
  }
  sleep(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}

/**
 * How long a polling loop waits before it looks again: `busyMs` while it found work within the
 * last `awakeMs` (what commits unannounced is found so), `idleMs` or so (jittered) otherwise;
 * wake() ends the wait at once. See docs/decisions/0011-idle-worker.md.
 */
export class LoopPace {
  readonly #waker = new Waker();
  #workAt = Number.NEGATIVE_INFINITY;
  constructor(private readonly timing: { busyMs: number; idleMs: number; awakeMs: number }) {}
  /** The loop found work just now. */
  worked(): void {
    this.#workAt = Date.now();
  }
  /** Whether the loop found work within the last `awakeMs` (it waits `busyMs` then). */
  get awake(): boolean {
    return Date.now() - this.#workAt < this.timing.awakeMs;
  }
  /** Ends the current (or the next) wait at once. */
  wake(): void {
    this.#waker.wake();
  }
  /** Waits as the loop's recent work says, or until woken. */
  next(): Promise<void> {
    const { busyMs, idleMs, awakeMs } = this.timing;
    return this.#waker.sleep(Date.now() - this.#workAt < awakeMs ? busyMs : jittered(idleMs));
  }
  /** Waits `busyMs` whatever the recent work (for room, after an error), or until woken. */
  brief(): Promise<void> {
    return this.#waker.sleep(this.timing.busyMs);
  }
}

/**
 * Runs `pass` paced by a LoopPace: every `busyMs` while there is work, every `idleMs` otherwise,
 * never two at once. There is work when a pass says so (returns true) or wake() was called within
 * the last `awakeMs`; wake() also runs the next pass at once. A failed pass goes to `onError` and
 * counts as work (it is tried again soon). keepAwake() keeps the busy pace for `awakeMs` more
 * without an extra pass (one at once only when it was idle). stop() waits for a pass under way.
 */
export function paced(
  timing: { busyMs: number; idleMs: number; awakeMs: number },
  pass: () => Promise<boolean>,
  onError: (err: unknown) => void,
): { wake(): void; keepAwake(): void; stop(): Promise<void> } {
  const pace = new LoopPace(timing);
  let stopped = false;
  const loop = (async () => {
    // The first pass waits a busy interval, as every() does: start-up has enough to do.
    await pace.brief();
    while (!stopped) {
      try {
        if (await pass()) pace.worked();
      } catch (err) {
        onError(err);
        pace.worked();
      }
      if (stopped) break;
      await pace.next();
    }
  })();
  return {
    wake() {
      pace.worked();
      pace.wake();
    },
    keepAwake() {
      const idle = !pace.awake;
      pace.worked();
      if (idle) pace.wake();
    },
    async stop() {
      stopped = true;
      pace.wake();
      await loop;
    },
  };
}
