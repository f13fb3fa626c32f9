import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../src/accounts/accounts.ts";
import { createPool, type Pool, withTransaction } from "../../src/db/pool.ts";
import type { RateLimitDecision, RateLimitDefaults, RateLimitRequest } from "../../src/limits/rate-limits.ts";
import { setAccountRateLimits } from "../../src/limits/rate-limits.ts";
import { RequestLimiter, SLICE_LIFETIME_MS } from "../../src/limits/request-limiter.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { recipientsLevel } from "../support/rate-limits.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Slices of the buckets taken by each process (migration 016, src/limits/slices.ts), on a real
 * database: two RequestLimiters with pools of their own stand in for two API processes. Limits of
 * 100 or more a window are sliced; the counters say the slices were really used, so a test that
 * passes is not just the exact path passing.
 */
let db: TestDatabase;
const pools: Pool[] = [];
const limiters: RequestLimiter[] = [];

interface Counted {
  limiter: RequestLimiter;
  local: number;
  sliced: number;
  returned: number;
}

function limiter(defaults: RateLimitDefaults): Counted {
  const pool = createPool(db.url, 2);
  pools.push(pool);
  const counted: Counted = { local: 0, sliced: 0, returned: 0 } as Counted;
  counted.limiter = new RequestLimiter(pool, defaults, {
    onLocal: () => counted.local++,
    onSlice: (_scope, units) => {
      counted.sliced += units;
    },
    onGiveBack: (_scope, units) => {
      counted.returned += units;
    },
  });
  limiters.push(counted.limiter);
  return counted;
}

beforeAll(async () => {
  db = await createTestDatabase();
  pools.push(createPool(db.url, 2));
});

afterAll(async () => {
  for (const l of limiters) await l.close();
  for (const p of pools) await p.end();
  await db?.drop();
});

const admin = () => pools[0] as Pool;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const subjects = () => ({ keyId: randomUUID(), accountId: randomUUID() });

interface Taken {
  issuedAt: number;
  decision: RateLimitDecision;
}

/** `rounds` rounds of `perRound` requests at once, `everyMs` apart, spread over the limiters in turn. */
async function paced(
  over: readonly Counted[],
  request: RateLimitRequest,
  rounds: number,
  perRound: number,
  everyMs: number,
): Promise<Taken[]> {
  const all: Promise<Taken>[] = [];
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < perRound; i++) {
      const issuedAt = performance.now();
      const l = over[i % over.length] as Counted;
      all.push(l.limiter.take(request).then((decision) => ({ issuedAt, decision })));
    }
    if (everyMs > 0) await sleep(everyMs);
  }
  return Promise.all(all);
}

const allowedOf = (taken: readonly Taken[]) => taken.filter((t) => t.decision.allowed).length;

describe("slices of a bucket taken by each process", () => {
  it("two processes over a limit of 200 a second admit no more than the bucket allows", async () => {
    const defaults = { keyRequestsPerSecond: 0, accountRequestsPerSecond: 200, recipientsPerMinute: 0 };
    const a = limiter(defaults);
    const b = limiter(defaults);
    const request = { ...subjects(), recipients: 0 };
    const started = performance.now();
    // 2,000 requests a second for about a second, half through each process.
    const taken = await paced([a, b], request, 50, 40, 20);
    const elapsedSeconds = (performance.now() - started) / 1000;
    const allowed = allowedOf(taken);
    // A whole window at once, then 200 a second while the burst lasted.
    expect(allowed).toBeLessThanOrEqual(200 + Math.ceil(200 * elapsedSeconds));
    // Not starved either: slices held back cost at most a slice each (20) at a time.
    expect(allowed).toBeGreaterThanOrEqual(200 + Math.floor(200 * elapsedSeconds) - 2 * 20 - 20);
    // Slices served requests without a statement. Not necessarily in both processes: one that first
    // asks after the other drained the window may find no room for a slice beyond its own batch
    // for the rest of the burst, which the bounds above allow.
    expect(a.local + b.local).toBeGreaterThan(0);
  });

  it("a lone process admits a burst up to the whole limit, most of it without a statement", async () => {
    const one = limiter({ keyRequestsPerSecond: 0, accountRequestsPerSecond: 500, recipientsPerMinute: 0 });
    const request = { ...subjects(), recipients: 0 };
    const started = performance.now();
    const taken = await paced([one], request, 1, 1000, 0);
    const elapsedSeconds = (performance.now() - started) / 1000;
    const allowed = allowedOf(taken);
    // Its own slices are used up before the database refuses it: at most one slice (a tenth) of slack.
    expect(allowed).toBeGreaterThanOrEqual(500 - 50);
    expect(allowed).toBeLessThanOrEqual(500 + Math.ceil(500 * elapsedSeconds));
    expect(one.local).toBeGreaterThanOrEqual(100);
    // Decisions with slices carry the limit and a plausible remainder, like the database's.
    for (const t of taken) {
      const limit = t.decision.limits[0];
      expect(limit).toMatchObject({ scope: "account", quota: 500, windowSeconds: 1 });
      expect(limit?.remaining).toBeGreaterThanOrEqual(0);
      expect(limit?.remaining).toBeLessThanOrEqual(500);
    }
  });

  it("what a slice did not admit goes back to the bucket when it ends", async () => {
    // 100 recipients a minute: sliced (10 at most), and draining slowly (one every 0.6 s).
    const one = limiter({ keyRequestsPerSecond: 0, accountRequestsPerSecond: 0, recipientsPerMinute: 100 });
    const request = { ...subjects(), recipients: 1 };
    const started = performance.now();
    const taken = await paced([one], request, 1, 30, 0);
    const allowed = allowedOf(taken);
    expect(allowed).toBe(30);
    expect(one.sliced).toBeGreaterThan(0);
    await waitFor(() => one.returned > 0, {
      timeoutMs: 3 * SLICE_LIFETIME_MS + 1_000,
      what: "a slice's rest given back",
    });
    await sleep(50);
    const level = await recipientsLevel(admin(), request.accountId, 100);
    // Measured after the level was read: the drain it allows for is the most there can have been.
    const elapsedSeconds = (performance.now() - started) / 1000;
    // Only what was admitted, less what drained since.
    expect(level).toBeLessThanOrEqual(allowed + 1e-6);
    expect(level).toBeGreaterThanOrEqual(allowed - (100 / 60) * elapsedSeconds - 1e-6);
  });

  it("recipients of sends not accepted go back whether a slice is live or not", async () => {
    const one = limiter({ keyRequestsPerSecond: 0, accountRequestsPerSecond: 0, recipientsPerMinute: 100 });
    const request = { ...subjects(), recipients: 1 };
    const started = performance.now();
    const taken = await paced([one], request, 1, 30, 0);
    expect(allowedOf(taken)).toBe(30);
    // Five sends failed while the slice is live (back into it), five more after it ended (to the row).
    for (let i = 0; i < 5; i++) await one.limiter.giveBack(request.accountId, 1);
    await waitFor(() => one.returned > 0, {
      timeoutMs: 3 * SLICE_LIFETIME_MS + 1_000,
      what: "a slice's rest given back",
    });
    for (let i = 0; i < 5; i++) await one.limiter.giveBack(request.accountId, 1);
    const level = await recipientsLevel(admin(), request.accountId, 100);
    const elapsedSeconds = (performance.now() - started) / 1000;
    expect(level).toBeLessThanOrEqual(20 + 1e-6);
    expect(level).toBeGreaterThanOrEqual(20 - (100 / 60) * elapsedSeconds - 1e-6);
  });

  it("a lowered account limit applies within one slice lifetime", async () => {
    const { account } = await withTransaction(admin(), (tx) =>
      createAccount(tx, { name: `lease-${randomUUID().slice(0, 8)}`, currency: "USD", openingBalance: 0 }),
    );
    await withTransaction(admin(), (tx) => setAccountRateLimits(tx, account.id, { requestsPerSecond: 1000 }));
    const one = limiter({
      keyRequestsPerSecond: 500,
      accountRequestsPerSecond: 1000,
      recipientsPerMinute: 0,
    });
    const request = { keyId: randomUUID(), accountId: account.id, recipients: 0 };
    // Busy enough to hold slices of up to a hundred...
    const before = await paced([one], request, 10, 30, 10);
    expect(before.some((t) => t.decision.limits[0]?.quota === 1000)).toBe(true);
    expect(one.local).toBeGreaterThan(0);

    await withTransaction(admin(), (tx) => setAccountRateLimits(tx, account.id, { requestsPerSecond: 100 }));
    const changedAt = performance.now();
    // ...then slow, so an old slice would last well past its lifetime if it were let.
    const after = await paced([one], request, 60, 1, 10);
    const late = after.filter((t) => t.issuedAt >= changedAt + SLICE_LIFETIME_MS);
    expect(late.length).toBeGreaterThan(20);
    for (const t of late) {
      expect(t.decision.limits.map((l) => l.quota)).toEqual([100]);
    }
  });
});
