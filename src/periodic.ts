/**
 * Runs `pass` every `intervalMs` (the first time after `firstMs`, by default a whole interval),
 * never two at once: a pass still going when its next turn comes skips that turn. A failed pass
 * goes to `onError` and the next one runs as usual. The timers do not keep the process alive;
 * stop() waits for a pass under way.
 */
export function every(
  intervalMs: number,
  pass: () => Promise<unknown>,
  onError: (err: unknown) => void,
  options: { firstMs?: number } = {},
): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const turn = () => {
    running ??= pass()
      .then(
        () => {},
        (err: unknown) => onError(err),
      )
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(turn, intervalMs);
  timer.unref();
  const first = options.firstMs === undefined ? null : setTimeout(turn, options.firstMs);
  first?.unref();
  return {
    async stop() {
      clearInterval(timer);
      if (first) clearTimeout(first);
      await running;
    },
  };
}
