import { Coalescer } from "../coalescer.ts";
import type { Queryable } from "../db/pool.ts";
import {
  type DecisionWithSlices,
  decideRateLimits,
  giveBackSlices,
  type RateLimitDecision,
  type RateLimitDefaults,
  type RateLimitRequest,
} from "./rate-limits.ts";
import { type BucketId, SliceBook } from "./slices.ts";

export interface RequestLimiterOptions {
  /** How long a slice of a bucket serves this process's requests (src/limits/slices.ts). */
  sliceLifetimeMs?: number;
  /** Told the size of every statement's batch, for a metric. */
  onBatch?: (size: number) => void;
  /** Told every slice granted: its limit's scope and size. */
  onSlice?: (scope: string, units: number) => void;
  /** Told every request decided from this process's slices, without a statement. */
  onLocal?: () => void;
  /** Told every rest of a slice given back: its limit's scope and size. */
  onGiveBack?: (scope: string, units: number) => void;
  /** A give-back that failed (its units stay counted until the bucket drains them). */
  onError?: (err: unknown) => void;
}

/**
 * 200 ms: long enough that a busy subject's slice covers many requests (a statement every 200 ms
 * instead of every ~11 requests), short enough that a slice held back from other processes, or
 * taken under a limit since changed, is over well within a one-second window.
 */
export const SLICE_LIFETIME_MS = 200;

/**
 * The API process's way to the shared rate limits. A request is decided first from this process's
 * slices of its buckets (src/limits/slices.ts): no statement. Otherwise by the database
 * (`rate_limit_lease`: the SQL name predates the glossary of docs/decisions/0010), which also
 * grants the slices this process asks for; requests that arrive while a statement is in flight
 * are tried against the slices it brings, and the rest are decided together by the next one (see Coalescer), at most 100 a statement. One statement at a time: a
 * second would mostly wait on the first's row locks while holding a connection of its own. Every
 * refusal is the database's. Ended slices' rests go back in one statement per sweep.
 */
export class RequestLimiter {
  private readonly decisions: Coalescer<RateLimitRequest, RateLimitDecision>;
  private readonly book: SliceBook;
  private readonly options: RequestLimiterOptions;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweepAt = Number.POSITIVE_INFINITY;
  private lastSweep = Number.NEGATIVE_INFINITY;
  private givingBack: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Queryable,
    private readonly defaults: RateLimitDefaults,
    options: RequestLimiterOptions = {},
  ) {
    this.options = options;
    this.book = new SliceBook(options.sliceLifetimeMs ?? SLICE_LIFETIME_MS);
    this.decisions = new Coalescer((requests) => this.decideInDatabase(requests), {
      maxBatch: 100,
      maxInFlight: 1,
    });
  }

  take(request: RateLimitRequest): Promise<RateLimitDecision> {
    const now = performance.now();
    this.book.record(request, now);
    const local = this.book.decide(request, now);
    if (local) {
      this.options.onLocal?.();
      return Promise.resolve(local);
    }
    return this.decisions.take(request);
  }

  /**
   * Gives back a send's recipients when it was not accepted: into the account's live slice when
   * there is one, else to the bucket in the database, as a slice's rest goes back.
   */
  giveBack(accountId: string, recipients: number): Promise<void> {
    if (recipients <= 0) return Promise.resolve();
    if (this.book.giveBackRecipients(accountId, recipients, performance.now())) return Promise.resolve();
    return giveBackSlices(this.db, [
      { subject: `account:${accountId}`, scope: "recipients", units: recipients },
    ]);
  }

  /** Gives back every slice now (a process that stops); its later requests ask the database. */
  async close(): Promise<void> {
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.sweepTimer = null;
    this.sweepAt = Number.POSITIVE_INFINITY;
    await this.givingBack;
    await this.giveBackNow(this.book.sweep(performance.now(), true));
  }

  private async decideInDatabase(requests: readonly RateLimitRequest[]): Promise<RateLimitDecision[]> {
    const askedAt = performance.now();
    const answers: (RateLimitDecision | null)[] = requests.map((request) => {
      // The statement before this one may have brought slices that cover it.
      const local = this.book.decide(request, askedAt);
      if (local) this.options.onLocal?.();
      return local;
    });
    // The places of the requests the slices could not decide: the database decides them, in order.
    const places = answers.flatMap((answer, i) => (answer === null ? [i] : []));
    if (places.length > 0) {
      const asking = places.map((i) => requests[i] as RateLimitRequest);
      const asked = new Set<BucketId>();
      const wants = asking.map((r) => this.book.wants(r, askedAt, asked));
      this.options.onBatch?.(asking.length);
      const decided: DecisionWithSlices[] = await decideRateLimits(this.db, asking, wants, this.defaults);
      places.forEach((place, i) => {
        const decision = decided[i] as DecisionWithSlices;
        this.book.apply(asking[i] as RateLimitRequest, decision, askedAt);
        for (const limit of decision.limits) {
          if (limit.slice > 0) this.options.onSlice?.(limit.scope, limit.slice);
        }
        answers[place] = {
          allowed: decision.allowed,
          limits: decision.limits.map(({ slice: _, ...limit }) => limit),
        };
      });
    }
    this.scheduleSweep();
    return answers as RateLimitDecision[];
  }

  /** One timer, set for the next slice's end (or a later cleanup), never held open by the process. */
  private scheduleSweep(): void {
    const now = performance.now();
    const next = this.book.nextSweep(now);
    if (next === null) return;
    // A quarter of a lifetime apart at most: slices ending close together go back in one statement.
    const due = Math.max(next, this.lastSweep + this.book.lifetimeMs / 4);
    if (due >= this.sweepAt) return;
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.sweepAt = due;
    this.sweepTimer = setTimeout(() => this.sweep(), Math.max(0, due - now));
    this.sweepTimer.unref();
  }

  private sweep(): void {
    this.sweepTimer = null;
    this.sweepAt = Number.POSITIVE_INFINITY;
    this.lastSweep = performance.now();
    const back = this.book.sweep(this.lastSweep);
    // One give-back at a time, in order: a sweep's statement never waits behind another's locks.
    this.givingBack = this.givingBack.then(() => this.giveBackNow(back));
    this.scheduleSweep();
  }

  private async giveBackNow(back: ReturnType<SliceBook["sweep"]>): Promise<void> {
    if (back.length === 0) return;
    try {
      await giveBackSlices(this.db, back);
      for (const b of back) this.options.onGiveBack?.(b.scope, b.units);
    } catch (err) {
      this.options.onError?.(err);
    }
  }
}
