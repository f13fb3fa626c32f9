import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
});
afterAll(() => t.stop());

describe("GET /api/v1/sms/{id}", () => {
  it("returns the message in the success envelope, identical to the send response", async () => {
    const sent = await call(t.base, "POST", "/api/v1/sms", {
      headers: acct.headers,
      body: { to: "+263781234567", from: "SHIRI", message: "Ndeipi" },
    });
    const id = (sent.body as { id: string }).id;
    const res = await call(t.base, "GET", `/api/v1/sms/${id}`, { headers: acct.headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "success", message: "request successful", data: sent.body });
  });

  it("returns a bulk item's message with its charge as a string", async () => {
    const bulk = await call(t.base, "POST", "/api/v1/sms/bulk", {
      headers: acct.headers,
      body: { to: ["+263711234567"], from: "SHIRI", message: "Hi" },
    });
    const item = (bulk.body as { data: { items: { id: string; charge: number }[] } }).data.items[0];
    const res = await call(t.base, "GET", `/api/v1/sms/${item?.id}`, { headers: acct.headers });
    expect(res.body).toMatchObject({
      data: { id: item?.id, charge: String(item?.charge), status: "enqueued" },
    });
  });

  it("answers 400 invalid sms id (legacy) for a non-UUID", async () => {
    const res = await call(t.base, "GET", "/api/v1/sms/12345", { headers: acct.headers });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status: "",
      message: "invalid sms id",
      error: { type: "ERR_BAD_REQUEST", description: "invalid sms id" },
    });
  });

  it("answers 404 (legacy) for an unknown id and for another account's message", async () => {
    const expected = {
      status: "",
      message: "not found",
      error: { type: "err_not_found", description: "the resource does not exist" },
    };
    const unknown = await call(t.base, "GET", "/api/v1/sms/00000000-0000-4000-8000-000000000000", {
      headers: acct.headers,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(expected);

    const other = await t.account();
    const sent = await call(t.base, "POST", "/api/v1/sms", {
      headers: other.headers,
      body: { to: "+263781234567", from: "SHIRI", message: "mine" },
    });
    const theirs = await call(t.base, "GET", `/api/v1/sms/${(sent.body as { id: string }).id}`, {
      headers: acct.headers,
    });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual(expected);
  });
});
