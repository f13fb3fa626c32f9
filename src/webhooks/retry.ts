/**
 * The retry schedule of one event: exponential back-off from `baseMs`, capped at `maxDelayMs`,
 * with "equal jitter" (a random point in the upper half of each delay) so that the events of a
 * bulk send that failed together do not all come back at the same instant. Attempts stop once
 * the next one would start after `windowMs` from the event's creation.
 */
export interface RetryPolicy {
  baseMs: number;
  maxDelayMs: number;
  windowMs: number;
}

/** The delay before the next attempt, after `attemptsMade` (≥ 1) failed ones. */
export function retryDelayMs(attemptsMade: number, policy: RetryPolicy, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.min(attemptsMade - 1, 40));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** When to try again, or null when the retry window is spent and the event is failed for good. */
export function nextAttemptAt(
  createdAt: Date,
  now: Date,
  attemptsMade: number,
  policy: RetryPolicy,
  random = Math.random,
): Date | null {
  const next = now.getTime() + retryDelayMs(attemptsMade, policy, random);
  return next > createdAt.getTime() + policy.windowMs ? null : new Date(next);
}
