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
 * Runs `pass` every `busyMs` while there is work, and every `idleMs` otherwise, never two at once:
 * there is work when a pass says so (returns true) or wake() was called within the last `awakeMs`.
 * wake() also runs the next pass at once. A failed pass goes to `onError` and counts as work (it
 * is tried again soon). stop() waits for a pass under way. See docs/decisions/0011-idle-worker.md.
 */
export function paced(
  timing: { busyMs: number; idleMs: number; awakeMs: number },
  pass: () => Promise<boolean>,
  onError: (err: unknown) => void,
): { wake(): void; stop(): Promise<void> } {
  const waker = new Waker();
  let stopped = false;
  let workAt = Number.NEGATIVE_INFINITY;
  const loop = (async () => {
    // The first pass waits a busy interval, as every() does: start-up has enough to do.
    await waker.sleep(timing.busyMs);
    while (!stopped) {
      try {
        if (await pass()) workAt = Date.now();
      } catch (err) {
        onError(err);
        workAt = Date.now();
      }
      if (stopped) break;
      await waker.sleep(Date.now() - workAt < timing.awakeMs ? timing.busyMs : jittered(timing.idleMs));
    }
  })();
  return {
    wake() {
      workAt = Date.now();
      waker.wake();
    },
    async stop() {
      stopped = true;
      waker.wake();
      await loop;
    },
  };
}
