import type { Queryable, Tx } from "../db/pool.ts";

/**
 * Rate limits kept in Postgres (migration 010), so every API process shares them: requests per
 * second per API key and per account, recipients per minute per account. Each limit is a bucket
 * that holds a whole window's worth and drains at the limit's pace: a burst up to the limit,
 * then the limit's pace. Levels are kept in requests and recipients, so a changed limit applies
 * at once to what was taken before it.
 */

/** The configured limits of an account without its own; 0 is no limit. */
export interface RateLimitDefaults {
  keyRequestsPerSecond: number;
  accountRequestsPerSecond: number;
  recipientsPerMinute: number;
}

export interface RateLimitRequest {
  keyId: string;
  accountId: string;
  /** Recipients the request sends to; 0 when it sends nothing. */
  recipients: number;
}

export type LimitScope = "key" | "account" | "recipients";

/** One limit as it stood for a request, after its decision. */
export interface LimitState {
  scope: LimitScope;
  /** Requests (or recipients) per window. */
  quota: number;
  windowSeconds: number;
  remaining: number;
  /** Until the bucket is whole again. */
  resetMs: number;
  /** Until this limit would let the request through: 0 if it does, -1 if it never can. */
  retryMs: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** The limits that applied (none when every one is off). */
  limits: LimitState[];
}

/** A limit as the database decided it for a request, with the slice it granted (0: none). */
export interface LimitWithSlice extends LimitState {
  slice: number;
}

export interface DecisionWithSlices {
  allowed: boolean;
  limits: LimitWithSlice[];
}

/** What to give back to one bucket in the database. */
export interface GiveBack {
  /** The row in rate_limit_state: 'key:<id>' or 'account:<id>'. */
  subject: string;
  scope: LimitScope;
  units: number;
}

/** The slices a request asks for along with its own decision (0: none). */
export interface SliceWants {
  key: number;
  account: number;
  recipients: number;
}

interface DecisionRow {
  request: number;
  scope: LimitScope;
  quota: number;
  window_seconds: number;
  allowed: boolean;
  remaining: number;
  reset_ms: number;
  retry_ms: number;
  leased: number;
}

/**
 * Decides the requests in order, in one statement: each is allowed if it fits every limit that
 * applies to it, and then takes from all of them; an allowed request's process also gets the
 * slices it asked for of its buckets, as far as the database grants them (`slice` on each limit, the
 * function's `leased` column;
 * migration 016, src/limits/slices.ts). Unlogged buckets: no WAL flush to wait for.
 */
export async function decideRateLimits(
  db: Queryable,
  requests: readonly RateLimitRequest[],
  wants: readonly SliceWants[],
  defaults: RateLimitDefaults,
): Promise<DecisionWithSlices[]> {
  const { rows } = await db.query<DecisionRow>({
    name: "shiri_rate_limit_lease",
    text: `SELECT * FROM rate_limit_lease($1::uuid[], $2::uuid[], $3::integer[], $4::integer[],
                                          $5::integer[], $6::integer[], $7, $8, $9)`,
    values: [
      requests.map((r) => r.keyId),
      requests.map((r) => r.accountId),
      requests.map((r) => r.recipients),
      wants.map((w) => w.key),
      wants.map((w) => w.account),
      wants.map((w) => w.recipients),
      defaults.keyRequestsPerSecond,
      defaults.accountRequestsPerSecond,
      defaults.recipientsPerMinute,
    ],
  });
  const decisions: DecisionWithSlices[] = requests.map(() => ({ allowed: true, limits: [] }));
  for (const row of rows) {
    const decision = decisions[row.request - 1];
    if (!decision) continue;
    decision.allowed = row.allowed;
    decision.limits.push({
      scope: row.scope,
      quota: row.quota,
      windowSeconds: row.window_seconds,
      remaining: row.remaining,
      resetMs: row.reset_ms,
      retryMs: row.retry_ms,
      slice: row.leased,
    });
  }
  return decisions;
}

/** Gives back the unused rests of slices, every bucket in one statement (rate_limit_give_back). */
export async function giveBackSlices(db: Queryable, back: readonly GiveBack[]): Promise<void> {
  if (back.length === 0) return;
  await db.query({
    name: "shiri_rate_limit_give_back",
    text: "SELECT rate_limit_give_back($1::text[], $2::float8[], $3::float8[])",
    values: [
      back.map((b) => b.subject),
      back.map((b) => (b.scope === "recipients" ? 0 : b.units)),
      back.map((b) => (b.scope === "recipients" ? b.units : 0)),
    ],
  });
}

/** An account's own limits; null fields use the configured defaults, 0 is no limit. */
export interface AccountRateLimits {
  account_id: string;
  requests_per_second: number | null;
  recipients_per_minute: number | null;
  updated_at: Date;
}

/**
 * Sets an account's own requests per second (for the account and each of its keys) and, when
 * given, its recipients per minute (left as it was when not). Takes effect on the next request.
 */
export async function setAccountRateLimits(
  tx: Tx,
  accountId: string,
  limits: { requestsPerSecond: number; recipientsPerMinute?: number },
): Promise<AccountRateLimits> {
  const { rows } = await tx.query<AccountRateLimits>(
    `INSERT INTO account_rate_limits AS l (account_id, requests_per_second, recipients_per_minute)
     VALUES ($1, $2, $3)
     ON CONFLICT (account_id) DO UPDATE
        SET requests_per_second = EXCLUDED.requests_per_second,
            recipients_per_minute = CASE WHEN $4 THEN EXCLUDED.recipients_per_minute
                                         ELSE l.recipients_per_minute END,
            updated_at = now()
     RETURNING account_id, requests_per_second, recipients_per_minute, updated_at`,
    [
      accountId,
      limits.requestsPerSecond,
      limits.recipientsPerMinute ?? null,
      limits.recipientsPerMinute !== undefined,
    ],
  );
  return rows[0] as AccountRateLimits;
}

export async function accountRateLimits(db: Queryable, accountId: string): Promise<AccountRateLimits | null> {
  const { rows } = await db.query<AccountRateLimits>(
    `SELECT account_id, requests_per_second, recipients_per_minute, updated_at
       FROM account_rate_limits WHERE account_id = $1`,
    [accountId],
  );
  return rows[0] ?? null;
}
