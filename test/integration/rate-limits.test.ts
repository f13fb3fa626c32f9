import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/accounts/api-keys.ts";
import { withTransaction } from "../../src/db/pool.ts";
import { setAccountRateLimits } from "../../src/limits/rate-limits.ts";
import { recipientsLevel } from "../support/rate-limits.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Rate limits through the real API: 429 in each endpoint's own convention with Retry-After and
 * RateLimit-* headers, per key and per account, recipients per minute on sends, and an account's
 * own limits taking effect on its next request. A key may send 1 request a second here, so a
 * burst of a few concurrent requests always meets the limit; the recipients limits are per
 * minute (one recipient back every 6 s at 10 a minute), so their counts are exact.
 */
let t: TestService;

beforeAll(async () => {
  t = await startTestService({
    RATE_LIMIT_KEY_PER_SECOND: "1",
    RATE_LIMIT_ACCOUNT_PER_SECOND: "1000",
    RATE_LIMIT_RECIPIENTS_PER_MINUTE: "600000",
  });
});
afterAll(() => t.stop());

type Answer = Awaited<ReturnType<typeof call>>;

const single = { to: "+263771234567", from: "SHIRI", message: "rate" };
const bulkTo = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `+26377${String(3_000_000 + from + i)}`);

/** n identical requests at once. */
function burst(n: number, send: () => Promise<Answer>): Promise<Answer[]> {
  return Promise.all(Array.from({ length: n }, send));
}

const statuses = (answers: readonly Answer[]) => answers.map((a) => a.status).sort();

function expectLimitHeaders(a: Answer, limit: number): void {
  expect(a.headers.get("ratelimit-limit")).toBe(String(limit));
  expect(a.headers.get("ratelimit-remaining")).toMatch(/^\d+$/);
  expect(a.headers.get("ratelimit-reset")).toMatch(/^\d+$/);
  expect(a.headers.get("ratelimit-policy")).toMatch(/^\d+;w=\d+(, \d+;w=\d+)*$/);
}

/** A 429 with Retry-After, showing the limit that refused it and what is left of it. */
function expectTooMany(a: Answer, limit: number, remaining = 0): void {
  expect(a.status).toBe(429);
  const retryAfter = Number(a.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
  expectLimitHeaders(a, limit);
  expect(a.headers.get("ratelimit-remaining")).toBe(String(remaining));
}

const LEGACY_429 = {
  status: "",
  message: "too many requests",
  error: {
    type: "ERR_TOO_MANY_REQUESTS",
    description: "rate limit exceeded: retry after the number of seconds in Retry-After",
  },
};
const KIT_429 = {
  status: "error",
  message: "too many requests",
  error: {
    code: "TOO_MANY_REQUESTS",
    description: "rate limit exceeded: retry after the number of seconds in Retry-After",
  },
};

describe("requests per second per key", () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await t.account();
  });

  it("POST /api/v1/sms over the limit: 429 in the legacy shape, with Retry-After and RateLimit headers", async () => {
    const answers = await burst(5, () =>
      call(t.base, "POST", "/api/v1/sms", { headers: acct.headers, body: single }),
    );
    expect(statuses(answers)).toContain(202);
    expect(statuses(answers)).toContain(429);
    for (const a of answers) {
      if (a.status === 202) expectLimitHeaders(a, 1);
      else {
        expectTooMany(a, 1);
        expect(a.body).toEqual(LEGACY_429);
      }
    }
    // Refused sends wrote nothing.
    const { rows } = await t.service.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE account_id = $1",
      [acct.id],
    );
    expect(rows[0]?.n).toBe(answers.filter((a) => a.status === 202).length);
  });

  it("GET /api/v1/sms/{id} over the limit: 429 in the legacy shape", async () => {
    const { rows } = await t.service.pool.query<{ id: string }>(
      "SELECT id FROM messages WHERE account_id = $1 LIMIT 1",
      [acct.id],
    );
    const id = rows[0]?.id as string;
    const answers = await burst(5, () => call(t.base, "GET", `/api/v1/sms/${id}`, { headers: acct.headers }));
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expectTooMany(a, 1);
      expect(a.body).toEqual(LEGACY_429);
    }
  });

  it("Kit endpoints over the limit: 429 in the Kit shape (bulk, balance, key list)", async () => {
    const answers = [
      ...(await burst(4, () =>
        call(t.base, "POST", "/api/v1/sms/bulk", {
          headers: acct.headers,
          body: { ...single, to: bulkTo(2) },
        }),
      )),
      ...(await burst(4, () => call(t.base, "GET", "/api/v1/balance", { headers: acct.headers }))),
      ...(await burst(4, () => call(t.base, "GET", "/api/v1/api-tokens", { headers: acct.headers }))),
    ];
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(3);
    for (const a of refused) {
      expectTooMany(a, 1);
      expect(a.body).toEqual(KIT_429);
    }
  });

  it("each key has its own bucket: another key of the account is not refused for the first one's requests", async () => {
    const other = await createApiKey(t.service.pool, acct.id, "second");
    const otherHeaders = { ...acct.headers, authorization: `Bearer ${other.token}` };
    const first = await burst(4, () => call(t.base, "GET", "/api/v1/balance", { headers: acct.headers }));
    expect(statuses(first)).toContain(429);
    const second = await call(t.base, "GET", "/api/v1/balance", { headers: otherHeaders });
    expect(second.status).toBe(200);
    expect(second.headers.get("ratelimit-remaining")).toBe("0");
  });

  it("no key, no limit: an unauthenticated request is a 401, not a 429", async () => {
    const answers = await burst(5, () => call(t.base, "GET", "/api/v1/balance"));
    expect(statuses(answers)).toEqual([401, 401, 401, 401, 401]);
  });
});

describe("an account's own limits", () => {
  it("take effect on the account's next request, and its keys follow its requests per second", async () => {
    const acct = await t.account();
    const before = await burst(5, () => call(t.base, "GET", "/api/v1/balance", { headers: acct.headers }));
    expect(statuses(before)).toContain(429);

    await withTransaction(t.service.pool, (tx) =>
      setAccountRateLimits(tx, acct.id, { requestsPerSecond: 50 }),
    );
    const after = await burst(5, () => call(t.base, "GET", "/api/v1/balance", { headers: acct.headers }));
    expect(statuses(after)).toEqual([200, 200, 200, 200, 200]);
    for (const a of after) expectLimitHeaders(a, 50);

    // Another account keeps the defaults.
    const other = await t.account();
    const untouched = await burst(5, () =>
      call(t.base, "GET", "/api/v1/balance", { headers: other.headers }),
    );
    expect(statuses(untouched)).toContain(429);
  });

  it("0 is no limit: no RateLimit headers and nothing refused", async () => {
    const acct = await t.account();
    await withTransaction(t.service.pool, (tx) =>
      setAccountRateLimits(tx, acct.id, { requestsPerSecond: 0, recipientsPerMinute: 0 }),
    );
    const answers = await burst(6, () => call(t.base, "GET", "/api/v1/balance", { headers: acct.headers }));
    expect(statuses(answers)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const a of answers) expect(a.headers.get("ratelimit-limit")).toBeNull();
  });
});

describe("recipients per minute", () => {
  /** An account that may make 100 requests a second and reach `perMinute` recipients a minute. */
  async function accountWith(perMinute: number): Promise<TestAccount> {
    const acct = await t.account({ balance: 100_000_000 });
    await withTransaction(t.service.pool, (tx) =>
      setAccountRateLimits(tx, acct.id, { requestsPerSecond: 100, recipientsPerMinute: perMinute }),
    );
    return acct;
  }
  const bulk = (acct: TestAccount, to: string[], extra: Record<string, unknown> = {}) =>
    call(t.base, "POST", "/api/v1/sms/bulk", { headers: acct.headers, body: { ...single, to, ...extra } });

  it("a bulk send counts its recipients; over the limit: 429 Kit with the recipients limit shown", async () => {
    const acct = await accountWith(10);
    const first = await bulk(acct, bulkTo(6));
    expect(first.status).toBe(202);
    expect(first.headers.get("ratelimit-limit")).toBe("10");
    expect(first.headers.get("ratelimit-remaining")).toBe("4");
    expect(first.headers.get("ratelimit-policy")).toBe("100;w=1, 10;w=60");

    // Four recipients are left: too few for six.
    const second = await bulk(acct, bulkTo(6, 100));
    expectTooMany(second, 10, 4);
    expect(second.body).toEqual(KIT_429);
    // Two recipients short, at one every 6 seconds.
    const retryAfter = Number(second.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(1);
    expect(retryAfter).toBeLessThanOrEqual(12);

    const third = await bulk(acct, bulkTo(4, 200));
    expect(third.status).toBe(202);
    const { rows } = await t.service.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE account_id = $1",
      [acct.id],
    );
    expect(rows[0]?.n).toBe(10);
  });

  it("single sends count one recipient each", async () => {
    const acct = await accountWith(2);
    const send = () => call(t.base, "POST", "/api/v1/sms", { headers: acct.headers, body: single });
    expect((await send()).status).toBe(202);
    expect((await send()).status).toBe(202);
    const third = await send();
    expectTooMany(third, 2);
    expect(third.body).toEqual(LEGACY_429);
  });

  it("a bulk send larger than a whole minute's recipients is a validation error on `to`, not a 429", async () => {
    const acct = await accountWith(10);
    const res = await bulk(acct, bulkTo(11));
    expect(res.status).toBe(400);
    expect(res.headers.get("retry-after")).toBeNull();
    expect(res.body).toEqual({
      status: "error",
      message: "Validation failed",
      error: {
        code: "VALIDATION_ERROR",
        description: "One or more fields failed validation",
        validation_errors: [
          {
            field: "to",
            description: "must contain at most 10 recipients (the account's recipients per minute)",
          },
        ],
      },
    });
  });

  it("a send that is not accepted gives its recipients back", async () => {
    const acct = await accountWith(10);
    const invalid = await bulk(acct, bulkTo(8), { from: "NOTOURS" });
    expect(invalid.status).toBe(400);
    // Given back once the refusal is answered: then all ten fit.
    let last: Answer | undefined;
    await waitFor(
      async () => {
        last = await bulk(acct, bulkTo(10, 300));
        return last.status === 202;
      },
      { timeoutMs: 5_000, intervalMs: 50, what: "the refused send's recipients given back" },
    );
    expect(last?.headers.get("ratelimit-remaining")).toBe("0");
  });
});

describe("an API process that stops", () => {
  it("gives the unused rest of its slices back to the buckets", async () => {
    const acct = await t.account({ balance: 100_000_000 });
    // 100 recipients a minute: sliced, a tenth (10) at most, draining one every 0.6 s.
    await withTransaction(t.service.pool, (tx) =>
      setAccountRateLimits(tx, acct.id, { requestsPerSecond: 100, recipientsPerMinute: 100 }),
    );
    const other = await t.startAnother("api");
    const sent = await call(other.base, "POST", "/api/v1/sms/bulk", {
      headers: acct.headers,
      body: { ...single, to: bulkTo(5, 400) },
    });
    expect(sent.status).toBe(202);
    // The five recipients and a slice of five more for the process's next sends.
    expect(await recipientsLevel(t.service.pool, acct.id, 100)).toBeGreaterThan(9);
    await other.stop();
    // Only what was sent is left: the slice's five went back as the process stopped.
    expect(await recipientsLevel(t.service.pool, acct.id, 100)).toBeLessThanOrEqual(5 + 1e-6);
  });
});
