/**
 * Waits for a condition instead of sleeping a fixed time: polls until `cond` holds, and fails with
 * the caller's description once `timeoutMs` has passed, so a hang becomes a clear test failure.
 */
export interface WaitForOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Named in the timeout error. */
  what?: string;
}

export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  { timeoutMs = 5_000, intervalMs = 10, what = "condition" }: WaitForOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
