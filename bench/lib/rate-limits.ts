/**
 * The bench measures Shiri with its rate limits on, as it runs by default, but set above anything
 * one machine can send, so that they cost what they cost and never refuse. Each can still be set
 * from the environment (RATE_LIMITS=off measures the send path without them).
 */
export function benchRateLimits(): Record<string, string> {
  const env = process.env;
  return {
    RATE_LIMIT_KEY_PER_SECOND: env.RATE_LIMIT_KEY_PER_SECOND || "1000000",
    RATE_LIMIT_ACCOUNT_PER_SECOND: env.RATE_LIMIT_ACCOUNT_PER_SECOND || "1000000",
    RATE_LIMIT_RECIPIENTS_PER_MINUTE: env.RATE_LIMIT_RECIPIENTS_PER_MINUTE || "1000000000",
  };
}
