import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.ts";
import { deleteExpiredKeys } from "../../src/intake/idempotency.ts";
import { balanceFromLedger, topUp } from "../../src/ledger/ledger.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

const count = async (accountId: string) =>
  (await t.service.pool.query("SELECT count(*)::int AS n FROM messages WHERE account_id = $1", [accountId]))
    .rows[0]?.n;

const withKey = (a: TestAccount, key: string) => ({ ...a.headers, "idempotency-key": key });

describe.each([
  ["/api/v1/sms", { to: "+263771234567", from: "SHIRI", message: "once" }, "legacy"],
  ["/api/v1/sms/bulk", { to: ["+263771234567", "+263711234567"], from: "SHIRI", message: "once" }, "kit"],
] as const)("Idempotency-Key on %s", (path, body, shape) => {
  it("replays the original response with no new message and no new charge", async () => {
    const a = await t.account({ balance: 100_000 });
    const first = await call(t.base, "POST", path, { headers: withKey(a, "k-1"), body });
    expect(first.status).toBe(202);
    const balance = await balanceNow(t.service.pool, a.id);
    const second = await call(t.base, "POST", path, { headers: withKey(a, "k-1"), body });
    expect(second.status).toBe(202);
    expect(second.body).toEqual(first.body);
    expect(await balanceNow(t.service.pool, a.id)).toEqual(balance);
    expect(await count(a.id)).toBe(path.endsWith("bulk") ? 2 : 1);
  });

  it("the same key with another body is 409 in the endpoint's shape", async () => {
    const a = await t.account();
    await call(t.base, "POST", path, { headers: withKey(a, "k-2"), body });
    const res = await call(t.base, "POST", path, {
      headers: withKey(a, "k-2"),
      body: { ...body, message: "changed" },
    });
    expect(res.status).toBe(409);
    if (shape === "legacy") expect(res.body).toMatchObject({ status: "", error: { type: "ERR_CONFLICT" } });
    else expect(res.body).toMatchObject({ status: "error", error: { code: "CONFLICT" } });
  });

  it("racing requests with one key make one send and one charge", async () => {
    const a = await t.account({ balance: 1_000_000 });
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call(t.base, "POST", path, { headers: withKey(a, "race"), body })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(202));
    for (const r of results) expect(r.body).toEqual(results[0]?.body);
    expect(await count(a.id)).toBe(path.endsWith("bulk") ? 2 : 1);
    const ledger = await balanceFromLedger(t.service.pool, a.id);
    expect(ledger.available + ledger.held).toBe(1_000_000);
    expect(ledger.held).toBe(path.endsWith("bulk") ? 850 : 450);
  });

  it("keys are per account: another account's same key is a new send", async () => {
    const a = await t.account();
    const b = await t.account();
    const ra = await call(t.base, "POST", path, { headers: withKey(a, "shared"), body });
    const rb = await call(t.base, "POST", path, { headers: withKey(b, "shared"), body });
    expect(rb.status).toBe(202);
    expect(rb.body).not.toEqual(ra.body);
    expect(await count(b.id)).toBeGreaterThan(0);
  });

  it("a failed send (insufficient balance) is not remembered: after a top-up the same key goes through", async () => {
    const a = await t.account({ balance: 10 });
    const denied = await call(t.base, "POST", path, { headers: withKey(a, "retry"), body });
    expect(denied.status).toBe(422);
    await withTransaction(t.service.pool, (tx) => topUp(tx, a.id, 100_000));
    const ok = await call(t.base, "POST", path, { headers: withKey(a, "retry"), body });
    expect(ok.status).toBe(202);
  });
});

describe("an Idempotency-Key names one request of its account, whichever send it went to", () => {
  const SENDS = {
    sms: ["/api/v1/sms", { to: "+263771234567", from: "SHIRI", message: "order 1" }, 450],
    bulk: ["/api/v1/sms/bulk", { to: ["+263711234567"], from: "SHIRI", message: "order 2" }, 400],
    batch: [
      "/api/v1/sms/batch",
      { from: "SHIRI", messages: [{ to: "+263731234567", message: "order 3" }] },
      380,
    ],
  } as const;
  const held = async (accountId: string) => (await balanceFromLedger(t.service.pool, accountId)).held;

  it.each([
    ["sms", "bulk"],
    ["bulk", "sms"],
    ["sms", "batch"],
    ["batch", "bulk"],
  ] as const)("a key used on %s, then on %s: 409, nothing written or charged", async (first, second) => {
    const a = await t.account({ balance: 100_000 });
    const [firstPath, firstBody, firstCharge] = SENDS[first];
    const [secondPath, secondBody] = SENDS[second];
    expect(
      (await call(t.base, "POST", firstPath, { headers: withKey(a, "order-1"), body: firstBody })).status,
    ).toBe(202);
    const again = await call(t.base, "POST", secondPath, {
      headers: withKey(a, "order-1"),
      body: secondBody,
    });
    expect(again.status).toBe(409);
    expect(await count(a.id)).toBe(1);
    expect(await held(a.id)).toBe(firstCharge);
    // The first request's own retry still replays.
    const retry = await call(t.base, "POST", firstPath, { headers: withKey(a, "order-1"), body: firstBody });
    expect(retry.status).toBe(202);
    expect(await count(a.id)).toBe(1);
  });

  it("racing requests with one key on two endpoints make one send and one charge", async () => {
    const a = await t.account({ balance: 1_000_000 });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => {
        const [path, body] = i % 2 === 0 ? SENDS.sms : SENDS.bulk;
        return call(t.base, "POST", path, { headers: withKey(a, "race-across"), body });
      }),
    );
    const accepted = results.filter((r) => r.status === 202);
    expect(accepted.length).toBeGreaterThan(0);
    for (const r of accepted) expect(r.body).toEqual(accepted[0]?.body);
    expect(results.filter((r) => r.status !== 202).map((r) => r.status)).toEqual(
      Array(8 - accepted.length).fill(409),
    );
    expect(await count(a.id)).toBe(1);
    expect([450, 400]).toContain(await held(a.id));
  });
});

describe("idempotency key retention", () => {
  it("deletes keys past their retention, in chunks, and keeps the fresh ones", async () => {
    const a = await t.account({ balance: 1_000_000 });
    const body = { to: "+263771234567", from: "SHIRI", message: "kept a day" };
    for (const key of ["old-1", "old-2", "old-3", "fresh"])
      expect((await call(t.base, "POST", "/api/v1/sms", { headers: withKey(a, key), body })).status).toBe(
        202,
      );
    await t.service.pool.query(
      "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE account_id = $1 AND key LIKE 'old-%'",
      [a.id],
    );
    expect(await deleteExpiredKeys(t.service.pool, 24, 2)).toBe(2);
    expect(await deleteExpiredKeys(t.service.pool, 24, 2)).toBe(1);
    expect(await deleteExpiredKeys(t.service.pool, 24, 2)).toBe(0);
    const { rows } = await t.service.pool.query<{ key: string }>(
      "SELECT key FROM idempotency_keys WHERE account_id = $1",
      [a.id],
    );
    expect(rows.map((r) => r.key)).toEqual(["fresh"]);
  });
});
