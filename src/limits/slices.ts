import type {
  DecisionWithSlices,
  GiveBack,
  LimitScope,
  LimitState,
  RateLimitDecision,
  RateLimitRequest,
  SliceWants,
} from "./rate-limits.ts";

/**
 * One API process's slices of the shared rate-limit buckets (migration 016): the arithmetic only,
 * no database and no timers, on a clock the caller passes in (ms), so it is tested on its own.
 *
 * A slice is taken from the bucket in the database like a request's cost, so admitting requests
 * out of it needs no statement and can never admit more than the bucket allows, across any number
 * of processes. What bounds the cost to others is its size and its life: the database grants at
 * most a tenth of the limit and never the bucket's last tenth; this process asks for no more than
 * it used in the last slice lifetime (and nothing while it used fewer than 2), and a slice serves
 * requests for one lifetime only, after which its rest goes back to the bucket. So a slice holds
 * back from other processes at most a tenth of a limit, for at most a lifetime and a sweep, and a
 * changed limit is seen within a lifetime (every decision after it asks the database again).
 */

/** One bucket as this process knows it: the key's or the account's requests, the account's recipients. */
export type BucketId = `${LimitScope}:${string}`;

/** A slice of a bucket this process may admit requests from until it expires. */
interface Slice {
  kind: "slice";
  quota: number;
  windowSeconds: number;
  /** Units (requests or recipients) not yet admitted. */
  left: number;
  /** What the bucket had left after the slice was taken. */
  bucketRemaining: number;
  /** When the bucket was to be whole again, as of the grant (this process's clock). */
  wholeAt: number;
  expiresAt: number;
}

/** The database said this limit does not apply (no limit, or a key's at or above its account's). */
interface NoLimit {
  kind: "none";
  expiresAt: number;
}

type Entry = Slice | NoLimit;

/** Use of a bucket in this process: units in the current and the previous lifetime-long window. */
interface Demand {
  windowStart: number;
  current: number;
  previous: number;
}

/** Below this many units used in a lifetime a slice would save less than one statement. */
const SMALLEST_WANT = 2;

export function bucketOf(scope: LimitScope, request: RateLimitRequest): BucketId {
  return scope === "key" ? `key:${request.keyId}` : `${scope}:${request.accountId}`;
}

/** The row of rate_limit_state a bucket lives in (an account's two buckets share one). */
function subjectOf(bucket: BucketId): string {
  return bucket.startsWith("recipients:") ? `account:${bucket.slice("recipients:".length)}` : bucket;
}

function scopeOf(bucket: BucketId): LimitScope {
  return bucket.slice(0, bucket.indexOf(":")) as LimitScope;
}

/** The buckets a request takes from, with what it costs each. */
function costs(request: RateLimitRequest): [LimitScope, BucketId, number][] {
  const all: [LimitScope, BucketId, number][] = [
    ["key", bucketOf("key", request), 1],
    ["account", bucketOf("account", request), 1],
  ];
  if (request.recipients > 0) all.push(["recipients", bucketOf("recipients", request), request.recipients]);
  return all;
}

export class SliceBook {
  private readonly entries = new Map<BucketId, Entry>();
  private readonly demand = new Map<BucketId, Demand>();
  /** Rests of slices that were replaced before their end: given back at the next sweep. */
  private pending: GiveBack[] = [];

  constructor(
    /** How long a slice serves requests, and the window demand is measured over. */
    readonly lifetimeMs: number,
  ) {}

  /** Counts a request's use of its buckets, whoever decides it. */
  record(request: RateLimitRequest, now: number): void {
    for (const [, bucket, cost] of costs(request)) {
      let d = this.demand.get(bucket);
      if (!d) {
        d = { windowStart: now, current: 0, previous: 0 };
        this.demand.set(bucket, d);
      }
      this.roll(d, now);
      d.current += cost;
    }
  }

  private roll(d: Demand, now: number): void {
    if (now < d.windowStart + this.lifetimeMs) return;
    d.previous = now < d.windowStart + 2 * this.lifetimeMs ? d.current : 0;
    d.current = 0;
    d.windowStart = now - ((now - d.windowStart) % this.lifetimeMs);
  }

  /**
   * The request's decision out of this process's slices, taking from them; null when one of its
   * buckets has no live slice big enough (and no known absence of a limit): the database decides.
   */
  decide(request: RateLimitRequest, now: number): RateLimitDecision | null {
    const found: [LimitScope, Slice, number][] = [];
    for (const [scope, bucket, cost] of costs(request)) {
      const entry = this.entries.get(bucket);
      if (!entry || entry.expiresAt <= now) return null;
      if (entry.kind === "none") continue;
      if (entry.left < cost) return null;
      found.push([scope, entry, cost]);
    }
    const limits: LimitState[] = [];
    for (const [scope, slice, cost] of found) {
      slice.left -= cost;
      limits.push({
        scope,
        quota: slice.quota,
        windowSeconds: slice.windowSeconds,
        // Approximate: the bucket's remainder when the slice was taken (other processes may have
        // taken from it since, and it has drained since) plus what is left here.
        remaining: Math.min(slice.quota, Math.floor(slice.bucketRemaining + slice.left)),
        resetMs: Math.max(0, Math.ceil(slice.wholeAt - now)),
        retryMs: 0,
      });
    }
    return { allowed: true, limits };
  }

  /**
   * The slices to ask for with these requests, which go to the database together: for each
   * bucket with no live slice that covers the request, what this process used of it in the last
   * lifetime (at least SMALLEST_WANT), once per bucket (`asked`, shared by one statement's requests).
   */
  wants(request: RateLimitRequest, now: number, asked: Set<BucketId>): SliceWants {
    const wants: SliceWants = { key: 0, account: 0, recipients: 0 };
    for (const [scope, bucket, cost] of costs(request)) {
      if (asked.has(bucket)) continue;
      const entry = this.entries.get(bucket);
      const live = entry !== undefined && entry.expiresAt > now;
      if (live && (entry.kind === "none" || entry.left >= cost)) continue;
      const d = this.demand.get(bucket);
      if (!d) continue;
      this.roll(d, now);
      const want = Math.max(d.current, d.previous);
      if (want < SMALLEST_WANT) continue;
      wants[scope] = want;
      asked.add(bucket);
    }
    return wants;
  }

  /**
   * What the database decided for a request: its slices, and the limits that do not apply to it.
   * `askedAt` is when the statement was sent: a slice serves for one lifetime from then, so never
   * longer than that after the database granted it.
   */
  apply(request: RateLimitRequest, decision: DecisionWithSlices, askedAt: number): void {
    const expiresAt = askedAt + this.lifetimeMs;
    for (const [scope, bucket] of costs(request)) {
      const limit = decision.limits.find((l) => l.scope === scope);
      const entry = this.entries.get(bucket);
      if (!limit) {
        // Not in the answer: no limit applies (a send's recipients only when it sends).
        this.replace(bucket, { kind: "none", expiresAt });
        continue;
      }
      if (limit.slice <= 0) {
        // Limited, with no slice: a stale "no limit" must not outlive this answer.
        if (entry?.kind === "none") this.entries.delete(bucket);
        continue;
      }
      const windowMs = limit.windowSeconds * 1000;
      const slice: Slice = {
        kind: "slice",
        quota: limit.quota,
        windowSeconds: limit.windowSeconds,
        left: limit.slice,
        bucketRemaining: limit.remaining - limit.slice,
        wholeAt: askedAt + limit.resetMs + (limit.slice * windowMs) / limit.quota,
        expiresAt,
      };
      if (entry?.kind === "slice" && entry.expiresAt > askedAt && entry.left > 0) {
        // The old slice's rest joins the new one but keeps its own end: no unit serves longer
        // than a lifetime.
        slice.left += entry.left;
        slice.expiresAt = Math.min(entry.expiresAt, expiresAt);
        entry.left = 0;
      }
      this.replace(bucket, slice);
    }
  }

  private replace(bucket: BucketId, entry: Entry): void {
    const old = this.entries.get(bucket);
    if (old?.kind === "slice" && old.left > 0)
      this.pending.push({ subject: subjectOf(bucket), scope: scopeOf(bucket), units: old.left });
    this.entries.set(bucket, entry);
  }

  /**
   * Recipients of a send that was not accepted: back into the account's live slice when there is
   * one (the units are counted in the bucket either way: the slice gives them back when it ends).
   * False when there is none: they go back to the database directly.
   */
  giveBackRecipients(accountId: string, recipients: number, now: number): boolean {
    const entry = this.entries.get(`recipients:${accountId}`);
    if (entry?.kind !== "slice" || entry.expiresAt <= now) return false;
    entry.left += recipients;
    return true;
  }

  /** Ends the slices whose life is over (all of them with `all`): their rests, to give back. */
  sweep(now: number, all = false): GiveBack[] {
    const back = this.pending;
    this.pending = [];
    for (const [bucket, entry] of this.entries) {
      if (!all && entry.expiresAt > now) continue;
      if (entry.kind === "slice" && entry.left > 0)
        back.push({ subject: subjectOf(bucket), scope: scopeOf(bucket), units: entry.left });
      this.entries.delete(bucket);
    }
    for (const [bucket, d] of this.demand) {
      if (all || now >= d.windowStart + 2 * this.lifetimeMs) this.demand.delete(bucket);
    }
    return back;
  }

  /**
   * When the next sweep is due (null: nothing to sweep): when the first slice ends, at once for
   * rests waiting to go back, else after two lifetimes while anything is remembered (demand, "no
   * limit" answers), so that subjects no longer seen are forgotten.
   */
  nextSweep(now: number): number | null {
    if (this.pending.length > 0) return now;
    let next: number | null = null;
    for (const entry of this.entries.values()) {
      if (entry.kind === "slice" && (next === null || entry.expiresAt < next)) next = entry.expiresAt;
    }
    if (next !== null) return next;
    return this.entries.size > 0 || this.demand.size > 0 ? now + 2 * this.lifetimeMs : null;
  }
}
