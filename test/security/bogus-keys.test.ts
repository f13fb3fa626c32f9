/**
 * Abuse costs the abuser: a flood of well-formed bogus keys is refused without a key lookup while a
 * real client goes on being served; an address that fails too often is refused (429) by every API
 * process on one database; a key made before secrets had checksums still works, and while one is
 * active bogus tokens are looked up again.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/accounts/api-keys.ts";
import { hasValidChecksum, newToken } from "../../src/accounts/token-format.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { type RunningService, startService } from "../../src/service.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let t: TestService;
let acct: TestAccount;
let second: RunningService;

beforeAll(async () => {
  t = await startTestService({ AUTH_FAILURES_PER_MINUTE: "50" }, "api");
  acct = await t.account();
  second = await anotherApi({ AUTH_FAILURES_PER_MINUTE: "50" });
});

/** Another API process on the same database. */
function anotherApi(env: Record<string, string> = {}): Promise<RunningService> {
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: t.database.url,
    HOST: "127.0.0.1",
    PORT: "0",
    METRICS_PORT: "0",
    SHIRI_ENV: "test",
    START_SIMULATORS: "false",
    LOG_LEVEL: "silent",
    ...env,
  });
  return startService(config, createLogger("silent"), "api");
}
afterAll(async () => {
  await second?.stop();
  await t?.stop();
});

const bogus = () => `shr_${randomBytes(32).toString("base64url")}`;

async function refusals(service: RunningService, reason: string): Promise<number> {
  const metric = await service.metrics.authRefusals.get();
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

describe("tokens", () => {
  it("new secrets carry a checksum; random ones, and the old format, do not", () => {
    expect(hasValidChecksum(newToken())).toBe(true);
    expect(hasValidChecksum(bogus())).toBe(false);
    expect(hasValidChecksum("shr_short")).toBe(false);
  });
});

describe("a flood of bogus keys", () => {
  it("is refused without a lookup while a real client is served, and its address is then limited", async () => {
    // The count is per minute: not across a minute's end, which would start it again.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 15_000) await new Promise((r) => setTimeout(r, left + 200));
    const before = await refusals(t.service, "checksum");
    const flood = Array.from({ length: 40 }, () =>
      call(t.base, "GET", "/api/v1/balance", { headers: { authorization: `Bearer ${bogus()}` } }),
    );
    // The real client's latency through the flood, shown (a figure, not a timed assertion).
    const real = Array.from({ length: 20 }, async () => {
      const started = performance.now();
      const res = await call(t.base, "GET", "/api/v1/balance", { headers: acct.headers });
      return { ...res, ms: performance.now() - started };
    });
    const [bad, good] = [await Promise.all(flood), await Promise.all(real)];
    const times = good.map((r) => r.ms).sort((a, b) => a - b);
    console.info(
      `[security] a real client through 40 bogus keys: p50 ${times[9]?.toFixed(1)} ms, p99 ${times.at(-1)?.toFixed(1)} ms`,
    );
    expect(bad.every((r) => r.status === 401)).toBe(true);
    expect(good.every((r) => r.status === 200)).toBe(true);
    expect((await refusals(t.service, "checksum")) - before).toBe(40);
    expect(await refusals(t.service, "unknown")).toBe(0);
    // 40 failures here and 15 on the other process pass the limit of 50 a minute: both refuse it.
    for (let i = 0; i < 15; i++)
      await call(`http://127.0.0.1:${second.port}`, "GET", "/api/v1/balance", {
        headers: { authorization: `Bearer ${bogus()}` },
      });
    await new Promise((r) => setTimeout(r, 600));
    for (const base of [t.base, `http://127.0.0.1:${second.port}`]) {
      // One more failure each, so each process hears the shared total back.
      await call(base, "GET", "/api/v1/balance", { headers: { authorization: `Bearer ${bogus()}` } });
      await new Promise((r) => setTimeout(r, 600));
      const limited = await call(base, "GET", "/api/v1/balance", { headers: acct.headers });
      expect(limited.status, base).toBe(429);
      expect(limited.body).toMatchObject({ error: { code: "TOO_MANY_REQUESTS" } });
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    await t.service.pool.query("DELETE FROM auth_failures");
  });

  it("looks bogus tokens up again while a key without a checksum is active, which still works", async () => {
    await t.service.pool.query("DELETE FROM auth_failures");
    const old = bogus(); // the old format: 32 random bytes, no checksum
    await t.service.pool.query(
      "INSERT INTO api_keys (id, account_id, name, token_hash, checksummed) VALUES ($1, $2, 'old', $3, false)",
      [randomUUID(), acct.id, hashToken(old)],
    );
    // A fresh process learns the old key is there (the others keep their answer a minute).
    const third = await anotherApi();
    try {
      const base = `http://127.0.0.1:${third.port}`;
      expect(
        (await call(base, "GET", "/api/v1/balance", { headers: { authorization: `Bearer ${old}` } })).status,
      ).toBe(200);
      await call(base, "GET", "/api/v1/balance", { headers: { authorization: `Bearer ${bogus()}` } });
      expect(await refusals(third, "unknown")).toBe(1);
      expect(await refusals(third, "checksum")).toBe(0);
    } finally {
      await third.stop();
    }
  });

  it("a burst into one process is refused at the limit, not a flush later", async () => {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 5_000) await new Promise((r) => setTimeout(r, left + 200));
    await t.service.pool.query("DELETE FROM auth_failures");
    const strict = await anotherApi({ AUTH_FAILURES_PER_MINUTE: "5" });
    try {
      const base = `http://127.0.0.1:${strict.port}`;
      const statuses: number[] = [];
      // One after another, well within the 250 ms between flushes.
      for (let i = 0; i < 7; i++)
        statuses.push(
          (await call(base, "GET", "/api/v1/balance", { headers: { authorization: `Bearer ${bogus()}` } }))
            .status,
        );
      // Before, all seven were 401 and the address was refused only after the next flush.
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
      expect((await call(base, "GET", "/api/v1/balance", { headers: acct.headers })).status).toBe(429);
    } finally {
      await strict.stop();
      await t.service.pool.query("DELETE FROM auth_failures");
    }
  });
});
