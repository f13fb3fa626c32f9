import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account({ balance: 10_000_000 });
});
afterAll(() => t.stop());

const sendBulk = async (to: string[], who: TestAccount = acct) => {
  const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
    headers: who.headers,
    body: { to, from: "SHIRI", message: "bulk" },
  });
  expect(res.status).toBe(202);
  return (res.body as { data: { bulk_id: string; charge: number; items: { id: string }[] } }).data;
};

const notFound = {
  status: "error",
  message: "not found",
  error: { code: "NOT_FOUND", description: "the resource does not exist" },
};

describe("GET /api/v1/sms/bulk/{bulk_id}: happy path", () => {
  it("the bulk response carries bulk_id beside the contract's fields", async () => {
    const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
      headers: acct.headers,
      body: { to: ["+263771234567"], from: "SHIRI", message: "x" },
    });
    const data = (res.body as { data: Record<string, unknown> }).data;
    expect(Object.keys(data).sort()).toEqual(["bulk_id", "charge", "currency", "items", "total"]);
    const { rows } = await t.service.pool.query("SELECT account_id FROM bulk_sends WHERE id = $1", [
      data.bulk_id,
    ]);
    expect(rows).toEqual([{ account_id: acct.id }]);
  });

  it("answers the send with its messages counted per status, delivered and where the charge stands", async () => {
    const bulk = await sendBulk(["+263771000001", "+263711000002", "+263731000003", "12345"]);
    const [a, b] = bulk.items.map((i) => i.id);
    // As the pipeline would leave them: one accepted and delivered (captured), one refused (released).
    await t.service.pool.query(
      "UPDATE messages SET status = 'success', billing = 'captured', delivered_at = now() WHERE id = $1",
      [a],
    );
    await t.service.pool.query("UPDATE messages SET status = 'failed', billing = 'released' WHERE id = $1", [
      b,
    ]);
    const res = await call(t.base, "GET", `/api/v1/sms/bulk/${bulk.bulk_id}`, { headers: acct.headers });
    expect(res.status).toBe(200);
    const body = res.body as { status: string; data: Record<string, unknown> };
    expect(body.status).toBe("success");
    expect(body.data).toEqual({
      bulk_id: bulk.bulk_id,
      sender_id: "SHIRI",
      created_at: expect.any(String),
      total: 4,
      charge: 450 + 400 + 380 + 450,
      currency: "USD",
      status_counts: { created: 0, enqueued: 1, processing: 0, success: 1, failed: 2 },
      delivered: 1,
      // The unroutable number is billed at acceptance.
      billing: { held: 380, captured: 450 + 450, released: 400 },
    });
    expect(bulk.charge).toBe(body.data.charge);
  });
});

describe("GET /api/v1/sms/bulk/{bulk_id}: errors and security", () => {
  it("an unknown id, an id that is not a UUID, and another account's send are all 404 Kit", async () => {
    const other = await t.account();
    const theirs = await sendBulk(["+263771000001"], other);
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid", theirs.bulk_id]) {
      const res = await call(t.base, "GET", `/api/v1/sms/bulk/${id}`, { headers: acct.headers });
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual(notFound);
    }
    const own = await call(t.base, "GET", `/api/v1/sms/bulk/${theirs.bulk_id}`, { headers: other.headers });
    expect(own.status).toBe(200);
  });

  it("a single send's message id is not a bulk send", async () => {
    const sent = await call(t.base, "POST", "/api/v1/sms", {
      headers: acct.headers,
      body: { to: "+263771234567", from: "SHIRI", message: "x" },
    });
    const id = (sent.body as { id: string }).id;
    const res = await call(t.base, "GET", `/api/v1/sms/bulk/${id}`, { headers: acct.headers });
    expect(res.status).toBe(404);
  });

  it("answers 401 without a key, before looking anything up", async () => {
    const res = await call(t.base, "GET", "/api/v1/sms/bulk/00000000-0000-4000-8000-000000000000");
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: "UNAUTHORIZED" } });
  });

  it("GET /api/v1/sms/{id} still answers in its legacy shape beside the new routes", async () => {
    const res = await call(t.base, "GET", "/api/v1/sms/bulk", { headers: acct.headers });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: "", message: "invalid sms id" });
  });
});
