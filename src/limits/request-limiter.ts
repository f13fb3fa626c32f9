import { Coalescer } from "../coalescer.ts";
import type { Queryable } from "../db/pool.ts";
import {
  type RateLimitDecision,
  type RateLimitDefaults,
  type RateLimitRequest,
  returnRecipients,
  takeRateLimits,
} from "./rate-limits.ts";

/**
 * The API process's way to the shared rate limits: requests that arrive while a statement is in
 * flight are decided together by the next one (see Coalescer), at most 100 a statement. One
 * statement at a time: a second would mostly wait on the first's row locks (both take the same
 * account's buckets) while holding a connection of its own. Nothing is counted here: every
 * decision is the database's.
 */
export class RequestLimiter {
  private readonly decisions: Coalescer<RateLimitRequest, RateLimitDecision>;

  constructor(
    private readonly db: Queryable,
    defaults: RateLimitDefaults,
    onBatch: (size: number) => void = () => {},
  ) {
    this.decisions = new Coalescer((requests) => takeRateLimits(db, requests, defaults), {
      maxBatch: 100,
      maxInFlight: 1,
      onBatch,
    });
  }

  take(request: RateLimitRequest): Promise<RateLimitDecision> {
    return this.decisions.take(request);
  }

  /** Gives back a send's recipients when it was not accepted (see returnRecipients). */
  giveBack(accountId: string, recipients: number): Promise<void> {
    return returnRecipients(this.db, accountId, recipients);
  }
}
