import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.ts";
import { recordMessageEvents } from "../../src/webhooks/events.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * The account webhook endpoints and the events outbox, on an API-only service: nothing is
 * dispatched or delivered here, so every event row is the one the test made.
 */
let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
});
afterAll(() => t.stop());

const api = (method: string, path: string, body?: unknown, headers = acct.headers) =>
  call(t.base, method, `/api/v1${path}`, { headers, ...(body === undefined ? {} : { body }) });

interface WebhookData {
  url: string | null;
  signing_secret_set: boolean;
  secret_created_at: string | null;
  updated_at: string | null;
  signing_secret?: string;
}
const dataOf = (res: { body: unknown }) => (res.body as { data: WebhookData }).data;

async function eventsOf(messageIds: string[]) {
  const { rows } = await t.service.pool.query<{
    message_id: string;
    type: string;
    url: string;
    state: string;
    payload: { id: string; type: string; created_at: string; data: Record<string, unknown> };
    id: string;
  }>(
    "SELECT id, message_id, type, url, state, payload FROM webhook_events WHERE message_id = ANY ($1) ORDER BY created_at",
    [messageIds],
  );
  return rows;
}

describe("the account webhook endpoints", () => {
  it("GET shows no webhook and no secret on a fresh account", async () => {
    const fresh = await t.account();
    const res = await api("GET", "/webhook", undefined, fresh.headers);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "success",
      message: "request successful",
      data: { url: null, signing_secret_set: false, secret_created_at: null, updated_at: null },
    });
  });

  it("PUT registers the URL and returns the signing secret once; later PUTs replace the URL and keep the secret", async () => {
    const a = await t.account();
    const first = await api("PUT", "/webhook", { url: "https://hooks.example.com/sms" }, a.headers);
    expect(first.status).toBe(200);
    expect((first.body as { message: string }).message).toBe(
      "webhook saved: save the signing secret now, it is returned only once",
    );
    const secret = dataOf(first).signing_secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(dataOf(first)).toMatchObject({ url: "https://hooks.example.com/sms", signing_secret_set: true });

    const second = await api("PUT", "/webhook", { url: "http://hooks.example.com:8080/v2" }, a.headers);
    expect(second.status).toBe(200);
    expect((second.body as { message: string }).message).toBe("webhook saved");
    expect(dataOf(second)).not.toHaveProperty("signing_secret");
    expect(dataOf(second).url).toBe("http://hooks.example.com:8080/v2");

    const got = await api("GET", "/webhook", undefined, a.headers);
    expect(dataOf(got)).toMatchObject({ url: "http://hooks.example.com:8080/v2", signing_secret_set: true });
    expect(JSON.stringify(got.body)).not.toContain(secret);
    const stored = await t.service.pool.query(
      "SELECT signing_secret FROM account_webhooks WHERE account_id = $1",
      [a.id],
    );
    expect(stored.rows[0]?.signing_secret).toBe(secret);
  });

  it("DELETE removes the URL, keeps the secret, and is idempotent", async () => {
    const a = await t.account();
    await api("PUT", "/webhook", { url: "https://hooks.example.com/sms" }, a.headers);
    for (let i = 0; i < 2; i++) {
      const del = await api("DELETE", "/webhook", undefined, a.headers);
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ status: "success", message: "webhook deleted" });
    }
    const got = await api("GET", "/webhook", undefined, a.headers);
    expect(dataOf(got)).toMatchObject({ url: null, signing_secret_set: true });
  });

  it("POST /webhook/secret creates or rotates the secret, returning it once, effective at once", async () => {
    const a = await t.account();
    const first = await api("POST", "/webhook/secret", undefined, a.headers);
    expect(first.status).toBe(201);
    const one = (first.body as { data: { signing_secret: string } }).data.signing_secret;
    const second = await api("POST", "/webhook/secret", undefined, a.headers);
    const two = (second.body as { data: { signing_secret: string } }).data.signing_secret;
    expect(two).not.toBe(one);
    expect(two).toMatch(/^whsec_/);
    // Already shown by the rotation, so a PUT does not show it again.
    const put = await api("PUT", "/webhook", { url: "https://hooks.example.com/x" }, a.headers);
    expect(dataOf(put)).not.toHaveProperty("signing_secret");
  });

  it.each([
    [{}, "url", "is required"],
    [{ url: "ftp://example.com/x" }, "url", "must be a valid URL"],
    [{ url: "not a url" }, "url", "must be a valid URL"],
    [{ url: 42 }, "url", "must be a valid URL"],
    [{ url: "https://example.com", extra: 1 }, "extra", "is not allowed"],
  ])("PUT %j is a Kit validation error", async (body, field, description) => {
    const res = await api("PUT", "/webhook", body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status: "error",
      message: "Validation failed",
      error: {
        code: "VALIDATION_ERROR",
        description: "One or more fields failed validation",
        validation_errors: [{ field, description }],
      },
    });
  });

  it("PUT with malformed JSON is a Kit BAD_REQUEST", async () => {
    const res = await call(t.base, "PUT", "/api/v1/webhook", { headers: acct.headers, rawBody: "{" });
    expect(res.status).toBe(400);
    expect((res.body as { error: { code: string } }).error.code).toBe("BAD_REQUEST");
  });

  it.each([
    ["GET", "/webhook"],
    ["PUT", "/webhook"],
    ["DELETE", "/webhook"],
    ["POST", "/webhook/secret"],
  ])("%s %s needs a key", async (method, path) => {
    const body = method === "PUT" ? { url: "https://example.com" } : undefined;
    const res = await api(method, path, body, { "content-type": "application/json" });
    expect(res.status).toBe(401);
    expect((res.body as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
  });

  it("a bulk webhook_url that is not http(s) is refused at the send", async () => {
    const res = await api("POST", "/sms/bulk", {
      to: ["+263771234567"],
      from: "SHIRI",
      message: "x",
      webhook_url: "javascript:alert(1)",
    });
    expect(res.status).toBe(400);
    expect((res.body as { error: { validation_errors: unknown } }).error.validation_errors).toEqual([
      { field: "webhook_url", description: "must be a valid URL" },
    ]);
  });
});

describe("events recorded at the send", () => {
  it("a bulk send with webhook_url records enqueued for routable messages and failed for unroutable ones, bound to its URL", async () => {
    const res = await api("POST", "/sms/bulk", {
      to: ["+263771234567", "+263711234567", "0771234567"],
      from: "SHIRI",
      message: "Mhoro",
      webhook_url: "https://send.example.com/cb",
    });
    const items = (res.body as { data: { items: { id: string }[] } }).data.items;
    const events = await eventsOf(items.map((i) => i.id));
    expect(events.map((e) => [e.message_id, e.type, e.url, e.state]).sort()).toEqual(
      [
        [items[0]?.id, "message.enqueued", "https://send.example.com/cb", "pending"],
        [items[1]?.id, "message.enqueued", "https://send.example.com/cb", "pending"],
        [items[2]?.id, "message.failed", "https://send.example.com/cb", "pending"],
      ].sort(),
    );
    for (const e of events) {
      expect(e.payload.id).toBe(e.id);
      expect(e.payload.type).toBe(e.type);
      const got = await api("GET", `/sms/${e.message_id}`);
      expect(e.payload.data).toEqual((got.body as { data: unknown }).data);
    }
  });

  it("a send with neither webhook_url nor account webhook records nothing", async () => {
    const quiet = await t.account();
    const res = await api(
      "POST",
      "/sms",
      { to: "+263771234567", from: "SHIRI", message: "x" },
      quiet.headers,
    );
    expect(res.status).toBe(202);
    expect(await eventsOf([(res.body as { id: string }).id])).toEqual([]);
  });

  it("a single send goes to the account webhook; the send's own webhook_url wins over it", async () => {
    const a = await t.account();
    await api("PUT", "/webhook", { url: "https://account.example.com/cb" }, a.headers);
    const single = await api("POST", "/sms", { to: "+263771234567", from: "SHIRI", message: "x" }, a.headers);
    const bulk = await api(
      "POST",
      "/sms/bulk",
      { to: ["+263771234567"], from: "SHIRI", message: "x", webhook_url: "https://own.example.com/cb" },
      a.headers,
    );
    const singleId = (single.body as { id: string }).id;
    const bulkId = (bulk.body as { data: { items: { id: string }[] } }).data.items[0]?.id ?? "";
    const events = await eventsOf([singleId, bulkId]);
    expect(events.find((e) => e.message_id === singleId)?.url).toBe("https://account.example.com/cb");
    expect(events.find((e) => e.message_id === bulkId)?.url).toBe("https://own.example.com/cb");
    // The 202 answer of the single send is the Message the event carries.
    expect(events.find((e) => e.message_id === singleId)?.payload.data).toEqual(single.body);
  });
});

describe("recordMessageEvents", () => {
  it("snapshots the Message exactly as GET shows it after the change, sub-millisecond timestamps included", async () => {
    const res = await api("POST", "/sms/bulk", {
      to: ["+263771234567", "+263731234567"],
      from: "SHIRI",
      message: 'Makorokoto 🎉 "quoted" \\ back',
      webhook_url: "https://snap.example.com/cb",
    });
    const ids = (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    await withTransaction(t.service.pool, async (tx) => {
      await tx.query(
        `UPDATE messages SET status = 'success', operator_response = 'DELIVRD',
                delivered_at = '2030-01-02T03:04:05.678999Z' WHERE id = ANY ($1)`,
        [ids],
      );
      await recordMessageEvents(tx, ids, "message.delivered");
    });
    const events = (await eventsOf(ids)).filter((e) => e.type === "message.delivered");
    expect(events).toHaveLength(2);
    for (const e of events) {
      const got = await api("GET", `/sms/${e.message_id}`);
      const data = (got.body as { data: Record<string, unknown> }).data;
      expect(e.payload.data).toEqual(data);
      expect(Object.keys(e.payload.data)).toEqual(Object.keys(data)); // and in the same order
      expect(data.delivered_at).toBe("2030-01-02T03:04:05.678Z");
      expect(e.payload.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(2);
  });

  it("is a no-op for messages without a destination and for an empty list", async () => {
    const quiet = await t.account();
    const res = await api(
      "POST",
      "/sms",
      { to: "+263771234567", from: "SHIRI", message: "x" },
      quiet.headers,
    );
    const id = (res.body as { id: string }).id;
    await recordMessageEvents(t.service.pool, [id], "message.success");
    await recordMessageEvents(t.service.pool, [], "message.success");
    expect(await eventsOf([id])).toEqual([]);
  });
});
