import { describe, expect, it } from "vitest";
import { outcomeOfStatus } from "../../src/webhooks/post-callback.ts";
import { nextAttemptAt, type RetryPolicy, retryDelayMs } from "../../src/webhooks/retry.ts";

const DEFAULT: RetryPolicy = { baseMs: 10_000, maxDelayMs: 3_600_000, windowMs: 24 * 3_600_000 };

describe("the retry schedule", () => {
  it("doubles from the base, jittered within the upper half of each step, up to the cap", () => {
    expect(retryDelayMs(1, DEFAULT, () => 0)).toBe(5_000);
    expect(retryDelayMs(1, DEFAULT, () => 1)).toBe(10_000);
    expect(retryDelayMs(2, DEFAULT, () => 1)).toBe(20_000);
    expect(retryDelayMs(5, DEFAULT, () => 0)).toBe(80_000);
    expect(retryDelayMs(10, DEFAULT, () => 1)).toBe(3_600_000);
    expect(retryDelayMs(10, DEFAULT, () => 0)).toBe(1_800_000);
    expect(retryDelayMs(1000, DEFAULT, () => 1)).toBe(3_600_000);
  });

  it("spreads the retries of events that failed together", () => {
    const delays = new Set(Array.from({ length: 100 }, () => retryDelayMs(3, DEFAULT)));
    expect(delays.size).toBeGreaterThan(50);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(20_000);
    for (const d of delays) expect(d).toBeLessThanOrEqual(40_000);
  });

  it("keeps trying for about 24 hours, then gives up", () => {
    const created = new Date(0);
    let now = created;
    let attempts = 1;
    for (;;) {
      const next = nextAttemptAt(created, now, attempts, DEFAULT, () => 0.5);
      if (!next) break;
      now = next;
      attempts++;
    }
    expect(now.getTime()).toBeGreaterThan(23 * 3_600_000);
    expect(now.getTime()).toBeLessThanOrEqual(24 * 3_600_000);
    expect(attempts).toBeGreaterThan(30);
    expect(attempts).toBeLessThan(50);
  });
});

describe("what an answer means", () => {
  it.each([200, 201, 202, 204, 299])("%i delivers", (status) => {
    expect(outcomeOfStatus(status)).toEqual({ kind: "delivered", status });
  });
  it.each([100, 301, 302, 400, 401, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504])(
    "%i is retried (a receiver mid-deploy must not lose events)",
    (status) => {
      expect(outcomeOfStatus(status).kind).toBe("retry");
    },
  );
  it("410 Gone fails for good", () => {
    expect(outcomeOfStatus(410)).toEqual({ kind: "failed", status: 410, error: "receiver answered 410" });
  });
});
