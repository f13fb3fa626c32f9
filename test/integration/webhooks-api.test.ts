import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.ts";
import { recordMessageEvents } from "../../src/events/events.ts";
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

/** A send's own webhook takes its messages' events; the account webhook these and the account's own. */
const MESSAGE_EVENTS = [
  "message.enqueued",
  "message.success",
  "message.failed",
  "message.delivered",
  "message.undelivered",
];
const ALL_EVENTS = [...MESSAGE_EVENTS, "message.received", "contact.opted_out", "contact.opted_in"];

interface WebhookData {
  url: string | null;
  events: string[];
  batch_size: number;
  signing_secret_set: boolean;
  secret_created_at: string | null;
  updated_at: string | null;
  signing_secret?: string;
}
const dataOf = (res: { body: unknown }) => (res.body as { data: WebhookData }).data;

/** A Kit validation error answer with these field errors. */
const kit = (validation_errors: unknown) => ({
  status: "error",
  message: "Validation failed",
  error: {
    code: "VALIDATION_ERROR",
    description: "One or more fields failed validation",
    validation_errors,
  },
});

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
      data: {
        url: null,
        events: ALL_EVENTS,
        batch_size: 1,
        signing_secret_set: false,
        secret_created_at: null,
        updated_at: null,
      },
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
    [{ url: "https://example.com/a\u0000b" }, "url", "must be a valid URL"],
    [{ url: "https://example.com/\u001b[31m" }, "url", "must be a valid URL"],
    [{ url: "https://example.com/\ud800" }, "url", "must be a valid URL"],
    [{ url: "https://example.com", extra: 1 }, "extra", "is not allowed"],
    // Forms the URL parser reads as http(s) that do not start with the scheme and `//` as written.
    [{ url: " http://hooks.example.com/a" }, "url", "must be a valid URL"],
    [{ url: "http:/hooks.example.com/a" }, "url", "must be a valid URL"],
    [{ url: "http:hooks.example.com/a" }, "url", "must be a valid URL"],
    [{ url: "http:\\\\hooks.example.com/a" }, "url", "must be a valid URL"],
    [{ url: "HTTPS:/hooks.example.com/a" }, "url", "must be a valid URL"],
  ])("PUT %j is a Kit validation error", async (body, field, description) => {
    const res = await api("PUT", "/webhook", body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(kit([{ field, description }]));
  });

  it.each([
    ["HTTP://127.0.0.1:42390/a", "http://127.0.0.1:42390/a"],
    ["Https://Hooks.Example.com/A?B=C", "https://Hooks.Example.com/A?B=C"],
  ])(
    "PUT %s takes the scheme in any case and keeps it in lower case, the rest as written",
    async (url, kept) => {
      const a = await t.account();
      const put = await api("PUT", "/webhook", { url }, a.headers);
      expect(put.status).toBe(200);
      expect(dataOf(put).url).toBe(kept);
      expect(dataOf(await api("GET", "/webhook", undefined, a.headers)).url).toBe(kept);
    },
  );

  it("PUT names the events it wants; GET and the answer show the list in force; a PUT without events goes back to all", async () => {
    const a = await t.account();
    const put = await api(
      "PUT",
      "/webhook",
      { url: "https://hooks.example.com/sms", events: ["message.delivered", "message.failed"] },
      a.headers,
    );
    expect(put.status).toBe(200);
    expect(dataOf(put).events).toEqual(["message.delivered", "message.failed"]);
    const got = await api("GET", "/webhook", undefined, a.headers);
    expect(dataOf(got)).toMatchObject({
      url: "https://hooks.example.com/sms",
      events: ["message.delivered", "message.failed"],
    });

    const again = await api("PUT", "/webhook", { url: "https://hooks.example.com/sms" }, a.headers);
    expect(dataOf(again).events).toEqual(ALL_EVENTS);
    expect(dataOf(await api("GET", "/webhook", undefined, a.headers)).events).toEqual(ALL_EVENTS);

    await api(
      "PUT",
      "/webhook",
      { url: "https://hooks.example.com/sms", events: ["message.success"] },
      a.headers,
    );
    await api("DELETE", "/webhook", undefined, a.headers);
    expect(dataOf(await api("GET", "/webhook", undefined, a.headers))).toMatchObject({
      url: null,
      events: ALL_EVENTS,
    });
  });

  it.each([
    [null, "must be an array of event types"],
    ["message.delivered", "must be an array of event types"],
    [[1], "must be an array of event types"],
    [[], "must name at least one event type"],
    [["message.delivered", "message.read"], `must contain only ${ALL_EVENTS.join(", ")}`],
    [["MESSAGE.DELIVERED"], `must contain only ${ALL_EVENTS.join(", ")}`],
    [["message.failed", "message.failed"], "must not repeat an event type"],
  ])(
    "PUT events %j is a Kit validation error naming events, and changes nothing",
    async (events, description) => {
      const a = await t.account();
      await api(
        "PUT",
        "/webhook",
        { url: "https://hooks.example.com/keep", events: ["message.failed"] },
        a.headers,
      );
      const res = await api("PUT", "/webhook", { url: "https://hooks.example.com/new", events }, a.headers);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(kit([{ field: "events", description }]));
      expect(dataOf(await api("GET", "/webhook", undefined, a.headers))).toMatchObject({
        url: "https://hooks.example.com/keep",
        events: ["message.failed"],
      });
    },
  );

  it("PUT sets how many events a callback request carries; a PUT without it, and DELETE, go back to 1", async () => {
    const a = await t.account();
    const url = "https://hooks.example.com/batched";
    const put = await api("PUT", "/webhook", { url, batch_size: 50 }, a.headers);
    expect(put.status).toBe(200);
    expect(dataOf(put)).toMatchObject({ url, batch_size: 50 });
    expect(dataOf(await api("GET", "/webhook", undefined, a.headers))).toMatchObject({ url, batch_size: 50 });
    expect(dataOf(await api("PUT", "/webhook", { url }, a.headers)).batch_size).toBe(1);
    await api("PUT", "/webhook", { url, batch_size: 100 }, a.headers);
    await api("DELETE", "/webhook", undefined, a.headers);
    expect(dataOf(await api("GET", "/webhook", undefined, a.headers))).toMatchObject({
      url: null,
      batch_size: 1,
    });
  });

  it.each([[0], [101], [2.5], ["10"], [null]])(
    "PUT batch_size %j is a Kit validation error naming batch_size, and changes nothing",
    async (batchSize) => {
      const a = await t.account();
      await api("PUT", "/webhook", { url: "https://hooks.example.com/keep", batch_size: 5 }, a.headers);
      const res = await api(
        "PUT",
        "/webhook",
        { url: "https://hooks.example.com/new", batch_size: batchSize },
        a.headers,
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual(
        kit([{ field: "batch_size", description: "must be an integer from 1 to 100" }]),
      );
      expect(dataOf(await api("GET", "/webhook", undefined, a.headers))).toMatchObject({
        url: "https://hooks.example.com/keep",
        batch_size: 5,
      });
    },
  );

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

describe("GET /api/v1/webhook/deliveries query parameters", () => {
  it.each([
    ["until=2030-01-01T00:00:00Z", "until"],
    ["foo=1", "foo"],
    ["State=failed", "State"],
    ["limit=5&sinse=2025-03-01T09:30:00Z", "sinse"],
  ])("an unknown one, ?%s, is a Kit validation error, as on the other lists", async (query, field) => {
    const res = await api("GET", `/webhook/deliveries?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(kit([{ field, description: "is not allowed" }]));
  });

  it("the known ones still filter", async () => {
    const res = await api("GET", "/webhook/deliveries?limit=5&state=failed&since=2025-03-01T09:30:00Z");
    expect(res.status).toBe(200);
    expect((res.body as { data: unknown }).data).toEqual([]);
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

describe("the events a webhook asks for", () => {
  const bulkIds = (res: { body: unknown }) =>
    (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
  /** Records `type` for the messages as a status change would, and returns the events now stored. */
  async function change(ids: string[], type: "message.success" | "message.delivered" | "message.failed") {
    await withTransaction(t.service.pool, (tx) => recordMessageEvents(tx, ids, type));
    return eventsOf(ids);
  }

  it("an account webhook that wants delivered only: its sends write no event at all, and only delivered is recorded later", async () => {
    const a = await t.account();
    await api(
      "PUT",
      "/webhook",
      { url: "https://account.example.com/cb", events: ["message.delivered"] },
      a.headers,
    );
    const single = await api("POST", "/sms", { to: "+263771234567", from: "SHIRI", message: "x" }, a.headers);
    const bulk = await api(
      "POST",
      "/sms/bulk",
      { to: ["+263771234567", "12345"], from: "SHIRI", message: "x" },
      a.headers,
    );
    expect([single.status, bulk.status]).toEqual([202, 202]);
    const ids = [(single.body as { id: string }).id, ...bulkIds(bulk)];
    // Neither enqueued (routable) nor failed (the unroutable number): nothing at the send.
    expect(await eventsOf(ids)).toEqual([]);
    expect(await change(ids, "message.success")).toEqual([]);
    const events = await change(ids, "message.delivered");
    expect(events.map((e) => [e.message_id, e.type, e.url]).sort()).toEqual(
      ids.map((id) => [id, "message.delivered", "https://account.example.com/cb"]).sort(),
    );
  });

  it("an account webhook that wants failed only records the unroutable number's failure at the send", async () => {
    const a = await t.account();
    await api(
      "PUT",
      "/webhook",
      { url: "https://account.example.com/cb", events: ["message.failed"] },
      a.headers,
    );
    const bulk = await api(
      "POST",
      "/sms/bulk",
      { to: ["+263771234567", "12345"], from: "SHIRI", message: "x" },
      a.headers,
    );
    const [routable, unroutable] = bulkIds(bulk);
    expect((await eventsOf([routable ?? "", unroutable ?? ""])).map((e) => [e.message_id, e.type])).toEqual([
      [unroutable, "message.failed"],
    ]);
  });

  it("a filter change takes effect on the next send, and the next status change of earlier messages", async () => {
    const a = await t.account();
    await api(
      "PUT",
      "/webhook",
      { url: "https://account.example.com/cb", events: ["message.success"] },
      a.headers,
    );
    const first = await api("POST", "/sms", { to: "+263771234567", from: "SHIRI", message: "x" }, a.headers);
    const firstId = (first.body as { id: string }).id;
    expect(await eventsOf([firstId])).toEqual([]);
    await api("PUT", "/webhook", { url: "https://account.example.com/cb" }, a.headers);
    const second = await api("POST", "/sms", { to: "+263771234567", from: "SHIRI", message: "x" }, a.headers);
    const secondId = (second.body as { id: string }).id;
    expect((await eventsOf([secondId])).map((e) => e.type)).toEqual(["message.enqueued"]);
    expect((await change([firstId], "message.delivered")).map((e) => e.type)).toEqual(["message.delivered"]);
  });

  it("a send's webhook_events applies to its own webhook_url, whatever the account webhook wants", async () => {
    const a = await t.account();
    await api(
      "PUT",
      "/webhook",
      { url: "https://account.example.com/cb", events: ["message.enqueued"] },
      a.headers,
    );
    const single = await api(
      "POST",
      "/sms",
      {
        to: "+263771234567",
        from: "SHIRI",
        message: "x",
        webhook_url: "https://own.example.com/single",
        webhook_events: ["message.delivered", "message.undelivered"],
      },
      a.headers,
    );
    expect(single.status).toBe(202);
    const bulk = await api(
      "POST",
      "/sms/bulk",
      {
        to: ["+263771234567", "12345"],
        from: "SHIRI",
        message: "x",
        webhook_url: "https://own.example.com/bulk",
        webhook_events: ["message.failed", "message.success"],
      },
      a.headers,
    );
    expect(bulk.status).toBe(202);
    const singleId = (single.body as { id: string }).id;
    const [routable, unroutable] = bulkIds(bulk);
    const ids = [singleId, routable ?? "", unroutable ?? ""];
    expect((await eventsOf(ids)).map((e) => [e.message_id, e.type, e.url])).toEqual([
      [unroutable, "message.failed", "https://own.example.com/bulk"],
    ]);
    const { rows } = await t.service.pool.query<{
      id: string;
      webhook_url: string;
      webhook_events: string[];
    }>("SELECT id, webhook_url, webhook_events FROM messages WHERE id = ANY ($1)", [ids]);
    expect(rows.find((r) => r.id === singleId)).toMatchObject({
      webhook_url: "https://own.example.com/single",
      webhook_events: ["message.delivered", "message.undelivered"],
    });
    const success = (await change(ids, "message.success")).filter((e) => e.type === "message.success");
    expect(success.map((e) => [e.message_id, e.url]).sort()).toEqual(
      [
        [routable, "https://own.example.com/bulk"],
        [unroutable, "https://own.example.com/bulk"],
      ].sort(),
    );
    const delivered = (await change(ids, "message.delivered")).filter((e) => e.type === "message.delivered");
    expect(delivered.map((e) => [e.message_id, e.url])).toEqual([
      [singleId, "https://own.example.com/single"],
    ]);
  });

  it("a send's webhook_url without webhook_events gets every event, even when the account webhook filters", async () => {
    const a = await t.account();
    await api(
      "PUT",
      "/webhook",
      { url: "https://account.example.com/cb", events: ["message.delivered"] },
      a.headers,
    );
    const single = await api(
      "POST",
      "/sms",
      { to: "+263771234567", from: "SHIRI", message: "x", webhook_url: "https://own.example.com/all" },
      a.headers,
    );
    const id = (single.body as { id: string }).id;
    await change([id], "message.success");
    const events = await change([id], "message.delivered");
    expect(events.map((e) => [e.type, e.url])).toEqual([
      ["message.enqueued", "https://own.example.com/all"],
      ["message.success", "https://own.example.com/all"],
      ["message.delivered", "https://own.example.com/all"],
    ]);
    expect(events[0]?.payload.data).toEqual(single.body);
  });
});

describe("webhook_url and webhook_events on the send endpoints", () => {
  const SINGLE = { to: "+263771234567", from: "SHIRI", message: "x" };
  const BULK = { to: ["+263771234567"], from: "SHIRI", message: "x" };
  const legacy = (validation_errors: unknown) => ({
    status: "",
    message: "invalid request",
    error: {
      type: "ERR_BAD_REQUEST",
      description: "one or more fields failed validation",
      validation_errors,
    },
  });
  const INVALID_EVENTS: Array<[unknown, string]> = [
    [null, "must be an array of event types"],
    [[], "must name at least one event type"],
    [["message.sent"], `must contain only ${MESSAGE_EVENTS.join(", ")}`],
    [["message.received"], `must contain only ${MESSAGE_EVENTS.join(", ")}`],
    [["message.success", "message.success"], "must not repeat an event type"],
  ];

  async function writesNothing(account: { id: string }, fn: () => Promise<void>) {
    const count = async () =>
      (
        await t.service.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM messages WHERE account_id = $1",
          [account.id],
        )
      ).rows[0]?.n;
    const before = await count();
    await fn();
    expect(await count()).toBe(before);
  }

  it("POST /api/v1/sms: a bad webhook_url or webhook_events is a legacy 400 naming the field, nothing written", async () => {
    const a = await t.account();
    await writesNothing(a, async () => {
      for (const url of [
        "not a url",
        "javascript:alert(1)",
        "ftp://example.com/x",
        42,
        null,
        " http://own.example.com/cb",
        "http:/own.example.com/cb",
        "http:own.example.com/cb",
        "http:\\\\own.example.com/cb",
      ]) {
        const res = await api("POST", "/sms", { ...SINGLE, webhook_url: url }, a.headers);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(legacy([{ field: "webhook_url", description: "must be a valid URL" }]));
      }
      const long = await api(
        "POST",
        "/sms",
        { ...SINGLE, webhook_url: `https://e.com/${"a".repeat(2_100)}` },
        a.headers,
      );
      expect(long.body).toEqual(
        legacy([{ field: "webhook_url", description: "must be at most 2048 characters" }]),
      );
      for (const [events, description] of INVALID_EVENTS) {
        const res = await api(
          "POST",
          "/sms",
          { ...SINGLE, webhook_url: "https://own.example.com/cb", webhook_events: events },
          a.headers,
        );
        expect(res.status).toBe(400);
        expect(res.body).toEqual(legacy([{ field: "webhook_events", description }]));
      }
      const alone = await api(
        "POST",
        "/sms",
        { ...SINGLE, webhook_events: ["message.delivered"] },
        a.headers,
      );
      expect(alone.status).toBe(400);
      expect(alone.body).toEqual(legacy([{ field: "webhook_events", description: "requires webhook_url" }]));
    });
  });

  it("POST /api/v1/sms/bulk: a bad webhook_events is a Kit 400 naming the field, nothing written", async () => {
    const a = await t.account();
    await writesNothing(a, async () => {
      for (const [events, description] of INVALID_EVENTS) {
        const res = await api(
          "POST",
          "/sms/bulk",
          { ...BULK, webhook_url: "https://own.example.com/cb", webhook_events: events },
          a.headers,
        );
        expect(res.status).toBe(400);
        expect(res.body).toEqual(kit([{ field: "webhook_events", description }]));
      }
      const alone = await api(
        "POST",
        "/sms/bulk",
        { ...BULK, webhook_events: ["message.delivered"] },
        a.headers,
      );
      expect(alone.status).toBe(400);
      expect(alone.body).toEqual(kit([{ field: "webhook_events", description: "requires webhook_url" }]));
    });
  });

  it("a send's webhook_url takes the scheme in any case and is stored with it in lower case, the rest as written", async () => {
    const a = await t.account();
    const single = await api(
      "POST",
      "/sms",
      { ...SINGLE, webhook_url: "HTTPS://Own.Example.com/Single" },
      a.headers,
    );
    expect(single.status).toBe(202);
    const bulk = await api(
      "POST",
      "/sms/bulk",
      { ...BULK, webhook_url: "Http://Own.Example.com/Bulk" },
      a.headers,
    );
    expect(bulk.status).toBe(202);
    const ids = [
      (single.body as { id: string }).id,
      ...(bulk.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id),
    ];
    const { rows } = await t.service.pool.query<{ webhook_url: string }>(
      "SELECT webhook_url FROM messages WHERE id = ANY ($1) ORDER BY webhook_url DESC",
      [ids],
    );
    expect(rows.map((r) => r.webhook_url)).toEqual([
      "https://Own.Example.com/Single",
      "http://Own.Example.com/Bulk",
    ]);
  });

  it("POST /api/v1/sms with a valid webhook_url answers the contract's Message, unchanged", async () => {
    const a = await t.account();
    const plain = await api("POST", "/sms", SINGLE, a.headers);
    const own = await api(
      "POST",
      "/sms",
      { ...SINGLE, webhook_url: "https://own.example.com/cb", webhook_events: ["message.delivered"] },
      a.headers,
    );
    expect(own.status).toBe(202);
    expect(Object.keys(own.body as object)).toEqual(Object.keys(plain.body as object));
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

  it("records one event for a message whose id is given twice", async () => {
    const res = await api("POST", "/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message: "twice",
      webhook_url: "https://twice.example.com/cb",
    });
    const id = (res.body as { id: string }).id;
    await withTransaction(t.service.pool, (tx) => recordMessageEvents(tx, [id, id], "message.delivered"));
    expect((await eventsOf([id])).filter((e) => e.type === "message.delivered")).toHaveLength(1);
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
