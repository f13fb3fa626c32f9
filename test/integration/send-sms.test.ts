import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceFromLedger } from "../../src/ledger/ledger.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account({ balance: 100_000 });
});
afterAll(() => t.stop());

const send = (body: unknown, headers = acct.headers) =>
  call(t.base, "POST", "/api/v1/sms", { headers, body });

describe("POST /api/v1/sms: happy path", () => {
  it("answers 202 with the Message bare, charge as a string, enqueued and undelivered", async () => {
    const res = await send({ to: "+263771234567", from: "SHIRI", message: "Hello" });
    expect(res.status).toBe(202);
    const m = res.body as Record<string, unknown>;
    expect(Object.keys(m).sort()).toEqual(
      [
        "charge",
        "charge_currency",
        "created_at",
        "delivered_at",
        "id",
        "message",
        "operator",
        "operator_response",
        "received_at",
        "sender_id",
        "status",
        "to",
      ].sort(),
    );
    expect(m).toMatchObject({
      to: "+263771234567",
      message: "Hello",
      sender_id: "SHIRI",
      operator: "econet",
      charge: "450",
      charge_currency: "USD",
      operator_response: "",
      status: "enqueued",
      delivered_at: null,
    });
    expect(m.id).toMatch(UUID);
    expect(m.received_at).toMatch(ISO);
    expect(m.created_at).toMatch(ISO);
  });

  it("resolves the operator with or without the leading +, and stores `to` as sent (trimmed)", async () => {
    const netone = await send({ to: " 263711234567 ", from: "SHIRI", message: "Hi" });
    expect(netone.body).toMatchObject({ to: "263711234567", operator: "netone", charge: "400" });
    const telecel = await send({ to: "+263731234567", from: "SHIRI", message: "Hi" });
    expect(telecel.body).toMatchObject({ operator: "telecel", charge: "380" });
  });

  it("prices per segment: a 161-character GSM body is two segments, one emoji makes it UCS-2", async () => {
    const two = await send({ to: "+263771234567", from: "SHIRI", message: "a".repeat(161) });
    expect(two.body).toMatchObject({ charge: "900" });
    const ucs2 = await send({ to: "+263771234567", from: "SHIRI", message: `${"a".repeat(70)}😀` });
    expect(ucs2.body).toMatchObject({ charge: "900" }); // 72 UTF-16 units: two UCS-2 segments
  });

  it("bills an unroutable number at the highest price and fails it at once with UNROUTABLE", async () => {
    const res = await send({ to: "0771234567", from: "SHIRI", message: "Hi" });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      operator: "",
      status: "failed",
      operator_response: "UNROUTABLE",
      charge: "450",
    });
    const { rows } = await t.service.pool.query("SELECT billing FROM messages WHERE id = $1", [
      (res.body as { id: string }).id,
    ]);
    expect(rows[0]).toEqual({ billing: "captured" });
  });

  it("holds each charge on the ledger, and the ledger alone gives the same balance", async () => {
    const before = await balanceNow(t.service.pool, acct.id);
    await send({ to: "+263771234567", from: "SHIRI", message: "Hi" });
    const after = await balanceNow(t.service.pool, acct.id);
    expect(after?.available).toBe((before?.available ?? 0) - 450);
    expect(after?.held).toBe((before?.held ?? 0) + 450);
    const fromLedger = await balanceFromLedger(t.service.pool, acct.id);
    expect(fromLedger).toEqual({ available: after?.available, held: after?.held });
  });
});

describe("POST /api/v1/sms: errors", () => {
  it("refuses an unapproved sender id with the contract's legacy 400", async () => {
    const res = await send({ to: "+263771234567", from: "NOPE", message: "Hi" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status: "",
      message: "unknown or unapproved sender id",
      error: { type: "ERR_BAD_REQUEST", description: "unknown or unapproved sender id" },
    });
  });

  it("refuses a pending sender id like an unknown one", async () => {
    const other = await t.account();
    await t.service.pool.query(
      "INSERT INTO sender_ids (id, account_id, address, verification_status) VALUES (gen_random_uuid(), $1, 'WAITING', 'pending')",
      [other.id],
    );
    const res = await send({ to: "+263771234567", from: "WAITING", message: "Hi" }, other.headers);
    expect(res.status).toBe(400);
    expect((res.body as { error: { type: string } }).error.type).toBe("ERR_BAD_REQUEST");
  });

  it("answers malformed JSON with the legacy 400", async () => {
    const res = await call(t.base, "POST", "/api/v1/sms", { headers: acct.headers, rawBody: '{"to": ' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: "", error: { type: "ERR_BAD_REQUEST" } });
  });

  it("lists missing and blank fields in validation_errors", async () => {
    const res = await send({ to: "", message: "   " });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: "", error: { type: "ERR_BAD_REQUEST" } });
    const fields = (res.body as { error: { validation_errors: { field: string; description: string }[] } })
      .error.validation_errors;
    expect(fields).toEqual(
      expect.arrayContaining([
        { field: "to", description: "cannot be blank" },
        { field: "from", description: "is required" },
        { field: "message", description: "cannot be blank" },
      ]),
    );
  });

  it("refuses a body longer than the segment limit before pricing it", async () => {
    const res = await send({ to: "+263771234567", from: "SHIRI", message: "a".repeat(153 * 10 + 1) });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('"field":"message"');
  });

  it("answers 422 insufficient balance in the legacy shape and writes nothing", async () => {
    const poor = await t.account({ balance: 449 });
    const res = await send({ to: "+263771234567", from: "SHIRI", message: "Hi" }, poor.headers);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      status: "",
      message: "insufficient balance",
      error: { type: "ERR_INSUFFICIENT_BALANCE", description: "insufficient balance" },
    });
    const { rows } = await t.service.pool.query(
      "SELECT count(*)::int AS n FROM messages WHERE account_id = $1",
      [poor.id],
    );
    expect(rows[0]).toEqual({ n: 0 });
    expect((await balanceNow(t.service.pool, poor.id))?.available).toBe(449);
  });

  it("spends a balance down to exactly zero and no further under concurrent sends", async () => {
    const exact = await t.account({ balance: 450 * 5 });
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        send({ to: "+263771234567", from: "SHIRI", message: "Hi" }, exact.headers),
      ),
    );
    expect(results.filter((r) => r.status === 202)).toHaveLength(5);
    expect(results.filter((r) => r.status === 422)).toHaveLength(7);
    expect((await balanceNow(t.service.pool, exact.id))?.available).toBe(0);
    expect(await balanceFromLedger(t.service.pool, exact.id)).toEqual({ available: 0, held: 450 * 5 });
  });
});
