/**
 * Runs `pass` every `intervalMs`, never two at once: a pass still going when its next turn comes
 * skips that turn. A failed pass goes to `onError` and the next one runs as usual. The timer does
 * not keep the process alive; stop() waits for a pass under way.
 */
export function every(
  intervalMs: number,
  pass: () => Promise<unknown>,
  onError: (err: unknown) => void,
): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    running ??= pass()
      .then(
        () => {},
        (err: unknown) => onError(err),
      )
      .finally(() => {
        running = null;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
