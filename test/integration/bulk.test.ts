import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceFromLedger } from "../../src/ledger/ledger.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService({ BULK_MAX_RECIPIENTS: "10000" });
  acct = await t.account({ balance: 100_000_000 });
});
afterAll(() => t.stop());

const bulk = (body: unknown, headers = acct.headers) =>
  call(t.base, "POST", "/api/v1/sms/bulk", { headers, body });

interface BulkItem {
  id: string;
  to: string;
  status: string;
  operator: string;
  charge: number;
  charge_currency: string;
}
interface BulkBody {
  status: string;
  message: string;
  data: { total: number; charge: number; currency: string; items: BulkItem[] };
}

const messageCount = async (accountId: string) =>
  (await t.service.pool.query("SELECT count(*)::int AS n FROM messages WHERE account_id = $1", [accountId]))
    .rows[0]?.n as number;

describe("POST /api/v1/sms/bulk: accepted", () => {
  it("answers 202 in the envelope with items in request order, integer charges and a per-operator price", async () => {
    const to = ["+263771234567", "263711234567", "+263731234567", "+263771234567", "12345"];
    const res = await bulk({ to, from: "SHIRI", message: "Mhoro" });
    expect(res.status).toBe(202);
    const body = res.body as BulkBody;
    expect(body.status).toBe("success");
    expect(body.message).toBe("bulk sms enqueued");
    expect(body.data.total).toBe(5);
    expect(body.data.currency).toBe("USD");
    expect(body.data.items.map((i) => i.to)).toEqual(to);
    expect(body.data.items.map((i) => i.operator)).toEqual(["econet", "netone", "telecel", "econet", ""]);
    expect(body.data.items.map((i) => i.charge)).toEqual([450, 400, 380, 450, 450]);
    expect(body.data.items.map((i) => i.status)).toEqual([
      "enqueued",
      "enqueued",
      "enqueued",
      "enqueued",
      "failed",
    ]);
    expect(body.data.charge).toBe(450 + 400 + 380 + 450 + 450);
    expect(typeof body.data.charge).toBe("number");
    expect(new Set(body.data.items.map((i) => i.id)).size).toBe(5); // the repeated number is two messages
    for (const item of body.data.items) {
      expect(Object.keys(item).sort()).toEqual([
        "charge",
        "charge_currency",
        "id",
        "operator",
        "status",
        "to",
      ]);
    }
  });

  it("stores the webhook_url on every message of the send", async () => {
    const res = await bulk({
      to: ["+263771234567", "+263711234567"],
      from: "SHIRI",
      message: "x",
      webhook_url: "https://example.com/hooks/sms",
    });
    const ids = (res.body as BulkBody).data.items.map((i) => i.id);
    const { rows } = await t.service.pool.query(
      "SELECT DISTINCT webhook_url FROM messages WHERE id = ANY($1)",
      [ids],
    );
    expect(rows).toEqual([{ webhook_url: "https://example.com/hooks/sms" }]);
  });

  it("accepts 10,000 recipients in set-based statements: every message and every job written", async () => {
    const to = Array.from({ length: 10_000 }, (_, i) => `+26377${String(1_000_000 + i).padStart(7, "0")}`);
    const before = await balanceNow(t.service.pool, acct.id);
    const res = await bulk({ to, from: "SHIRI", message: "Big send" });
    expect(res.status).toBe(202);
    const body = res.body as BulkBody;
    expect(body.data.total).toBe(10_000);
    expect(body.data.charge).toBe(4_500_000);
    const ids = body.data.items.map((i) => i.id);
    const { rows } = await t.service.pool.query(
      "SELECT count(*)::int AS n, count(DISTINCT bulk_id)::int AS bulks FROM messages WHERE id = ANY($1)",
      [ids],
    );
    expect(rows[0]).toEqual({ n: 10_000, bulks: 1 });
    const jobs = await t.service.pool.query<{ ids: number }>(
      `SELECT coalesce(sum(jsonb_array_length(data->'messageIds')), 0)::int AS ids
         FROM pgboss.job WHERE name = 'dispatch-econet' AND data->'messageIds' ?| $1`,
      [ids.slice(0, 1)],
    );
    expect(jobs.rows[0]?.ids).toBeGreaterThan(0);
    const allJobs = await t.service.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pgboss.job j, jsonb_array_elements_text(j.data->'messageIds') AS m(id)
        WHERE m.id = ANY($1::text[])`,
      [ids],
    );
    expect(allJobs.rows[0]?.n).toBe(10_000);
    expect((await balanceNow(t.service.pool, acct.id))?.available).toBe((before?.available ?? 0) - 4_500_000);
  });
});

describe("POST /api/v1/sms/bulk: rejected whole", () => {
  const validation = (errors: { field: string; description: string }[]) => ({
    status: "error",
    message: "Validation failed",
    error: {
      code: "VALIDATION_ERROR",
      description: "One or more fields failed validation",
      validation_errors: errors,
    },
  });

  it("an empty `to`, a blank message and a blank from are one Kit validation error", async () => {
    const res = await bulk({ to: [], from: " ", message: "" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      validation([
        { field: "to", description: "must contain at least one recipient" },
        { field: "from", description: "cannot be blank" },
        { field: "message", description: "cannot be blank" },
      ]),
    );
  });

  it("a webhook_url that is not an http(s) URL is refused", async () => {
    for (const webhook_url of ["not a url", "ftp://example.com/x", "javascript:alert(1)"]) {
      const res = await bulk({ to: ["+263771234567"], from: "SHIRI", message: "x", webhook_url });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(validation([{ field: "webhook_url", description: "must be a valid URL" }]));
    }
  });

  it("an unapproved sender is a validation error on `from`", async () => {
    const res = await bulk({ to: ["+263771234567"], from: "OTHER", message: "x" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(validation([{ field: "from", description: "unknown or unapproved sender id" }]));
  });

  it("one bad recipient among good ones rejects the whole send, naming its index", async () => {
    const before = await messageCount(acct.id);
    const res = await bulk({ to: ["+263771234567", "+2637712x4567"], from: "SHIRI", message: "x" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      validation([{ field: "to[1]", description: "must be a phone number in international format" }]),
    );
    expect(await messageCount(acct.id)).toBe(before);
  });

  it("more recipients than the limit is a validation error, never a partial send", async () => {
    const small = await startTestService({ BULK_MAX_RECIPIENTS: "3" });
    try {
      const a = await small.account();
      const res = await call(small.base, "POST", "/api/v1/sms/bulk", {
        headers: a.headers,
        body: { to: Array(4).fill("+263771234567"), from: "SHIRI", message: "x" },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(
        validation([{ field: "to", description: "must contain at most 3 recipients" }]),
      );
    } finally {
      await small.stop();
    }
  });

  it("malformed JSON is a Kit BAD_REQUEST", async () => {
    const res = await call(t.base, "POST", "/api/v1/sms/bulk", { headers: acct.headers, rawBody: "{to:" });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: "error", error: { code: "BAD_REQUEST" } });
  });

  it("an uncovered send is 422 UNPROCESSABLE_ENTITY and writes nothing", async () => {
    const poor = await t.account({ balance: 450 * 3 });
    const res = await bulk({ to: Array(4).fill("+263771234567"), from: "SHIRI", message: "x" }, poor.headers);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      status: "error",
      message: "insufficient balance",
      error: { code: "UNPROCESSABLE_ENTITY", description: "insufficient balance" },
    });
    expect(await messageCount(poor.id)).toBe(0);
    const bulks = await t.service.pool.query(
      "SELECT count(*)::int AS n FROM bulk_sends WHERE account_id = $1",
      [poor.id],
    );
    expect(bulks.rows[0]).toEqual({ n: 0 });
    expect(await balanceFromLedger(t.service.pool, poor.id)).toEqual({ available: 450 * 3, held: 0 });
  });
});
