import type { Queryable } from "../db/pool.ts";
import {
  type RateLimitDecision,
  type RateLimitDefaults,
  type RateLimitRequest,
  returnRecipients,
  takeRateLimits,
} from "./rate-limits.ts";

/** Requests decided by one statement, at most. */
const MAX_BATCH = 100;
/** Statements this process has in flight at once (each holds a pooled connection). */
const MAX_IN_FLIGHT = 2;

interface Waiting {
  request: RateLimitRequest;
  resolve: (decision: RateLimitDecision) => void;
  reject: (err: unknown) => void;
}

/**
 * The API process's way to the shared rate limits. Requests that arrive while a statement is in
 * flight wait for it and are then decided together by the next one, so a busy process runs
 * about one statement per round trip, not one per request, and a flood of requests cannot turn
 * into more statements than that. Nothing is counted here: every decision is the database's.
 */
export class RequestLimiter {
  private waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private readonly db: Queryable,
    private readonly defaults: RateLimitDefaults,
    private readonly onBatch: (size: number) => void = () => {},
  ) {}

  take(request: RateLimitRequest): Promise<RateLimitDecision> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.pump();
    });
  }

  /** Gives back a send's recipients when it was not accepted (see returnRecipients). */
  giveBack(accountId: string, recipients: number): Promise<void> {
    return returnRecipients(this.db, accountId, recipients);
  }

  private pump(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      this.inFlight++;
      this.onBatch(batch.length);
      takeRateLimits(
        this.db,
        batch.map((w) => w.request),
        this.defaults,
      )
        .then(
          (decisions) => {
            for (const [i, w] of batch.entries()) w.resolve(decisions[i] as RateLimitDecision);
          },
          (err: unknown) => {
            for (const w of batch) w.reject(err);
          },
        )
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}
