import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Config, loadConfig } from "../../src/config.ts";
import { createIntake } from "../../src/intake/app.ts";
import { openApiDocument } from "../../src/intake/openapi/document.ts";
import type { Endpoint } from "../../src/intake/openapi/endpoint.ts";
import { ENDPOINTS } from "../../src/intake/openapi/endpoints.ts";
import { createLogger } from "../../src/logger.ts";
import { createReadiness } from "../../src/observability/health.ts";
import { SendCommitter } from "../../src/sending/send-committer.ts";
import { type RegisteredRoute, registeredRoutes } from "../support/routes.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * The OpenAPI document against the app: every route registered on the Express app has an entry
 * and every entry a route (method, path and error convention); the document is served as built
 * and is well formed; and real answers, successes and errors, are what it documents.
 */
let t: TestService;
let acct: TestAccount;
let config: Config;
let doc: Record<string, unknown>;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account({ senders: ["SHIRI", "OTHER"] });
  config = loadConfig({ ...process.env, DATABASE_URL: t.database.url, LOG_LEVEL: "silent" });
  doc = openApiDocument(ENDPOINTS, config);
});
afterAll(() => t.stop());

function app() {
  const { pool, boss, metrics } = t.service;
  const sends = new SendCommitter(pool, boss, {
    maxSends: 1,
    maxMessages: 1,
    maxOpen: 1,
    dispatchBatchSize: 1,
  });
  return createIntake({
    pool,
    boss,
    metrics,
    config,
    logger: createLogger("silent"),
    sends,
    readiness: createReadiness({ db: () => pool }),
  }).app;
}

const key = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;

/** What differs between the routes and the entries; all three lists empty when they agree. */
function compare(routes: RegisteredRoute[], entries: readonly Endpoint[]) {
  const documented = new Map(entries.map((e) => [key(e), e]));
  const routed = new Set(routes.map(key));
  return {
    routesWithoutEntry: routes.filter((r) => !documented.has(key(r))).map(key),
    entriesWithoutRoute: entries.filter((e) => !routed.has(key(e))).map(key),
    conventionsThatDiffer: routes
      .filter((r) => documented.has(key(r)) && documented.get(key(r))?.errors !== r.errors)
      .map((r) => `${key(r)}: route ${r.errors}, entry ${documented.get(key(r))?.errors}`),
  };
}

describe("the document and the routes", () => {
  it("agree: every route has an entry, every entry a route, with the same error convention", () => {
    const routes = registeredRoutes(app());
    expect(routes.length).toBeGreaterThanOrEqual(16);
    expect(compare(routes, ENDPOINTS)).toEqual({
      routesWithoutEntry: [],
      entriesWithoutRoute: [],
      conventionsThatDiffer: [],
    });
  });

  it("the check catches a route without an entry, an entry without a route, and a wrong convention", () => {
    const express = app();
    express.get("/api/v1/undocumented/:id", (_req, res) => res.end());
    const [first, ...rest] = ENDPOINTS as [Endpoint, ...Endpoint[]];
    const entries = [...rest, { ...first, errors: "kit" as const }, { ...first, path: "/api/v1/nowhere" }];
    expect(compare(registeredRoutes(express), entries)).toEqual({
      routesWithoutEntry: ["GET /api/v1/undocumented/{id}"],
      entriesWithoutRoute: ["POST /api/v1/nowhere"],
      conventionsThatDiffer: ["POST /api/v1/sms: route legacy, entry kit"],
    });
  });
});

type Json = Record<string, unknown>;
const at = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((v, p) => (v && typeof v === "object" ? (v as Json)[p] : undefined), value);

function* walk(value: unknown, path = "#"): Generator<[string, unknown]> {
  yield [path, value];
  if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) yield* walk(v, `${path}/${k}`);
}

describe("GET /api/v1/openapi.json", () => {
  it("is served without a key, exactly as built from the entries", async () => {
    const res = await call(t.base, "GET", "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  it("is OpenAPI 3.1 whose references all resolve, with path parameters declared and no empty schema", () => {
    expect(doc.openapi).toBe("3.1.0");
    // Relative to wherever the document was fetched from: each deployment has its own address.
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    for (const [where, value] of walk(doc)) {
      if (where.endsWith("/$ref")) {
        const target = String(value).slice(2).split("/");
        expect(at(doc, ...target), `${where} → ${value}`).toBeDefined();
      }
      // A schema of {} accepts anything: a custom check that did not say what it accepts.
      if (/\/(schema|properties\/[^/]+|items)$/.test(where)) expect(value, where).not.toEqual({});
    }
    const paths = doc.paths as Record<string, Record<string, Json>>;
    for (const [path, item] of Object.entries(paths)) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      for (const [method, op] of Object.entries(item)) {
        const declared = (op.parameters as Json[]).filter((p) => p.in === "path").map((p) => p.name);
        expect(declared.sort(), `${method} ${path}`).toEqual(inPath);
        const statuses = Object.keys(op.responses as Json);
        expect(
          statuses.some((s) => s.startsWith("2")),
          `${method} ${path}`,
        ).toBe(true);
        expect(statuses.includes("401"), `${method} ${path}`).toBe(op.security === undefined);
      }
    }
  });

  it("describes the contract's types: charge a string on the Message, an integer in bulk; PascalCase keys", () => {
    const schemas = at(doc, "components", "schemas") as Json;
    expect(at(schemas, "Message", "properties", "charge", "type")).toBe("string");
    expect(at(schemas, "BulkResult", "properties", "charge", "type")).toBe("integer");
    expect(at(schemas, "BulkResult", "properties", "items", "items", "properties", "charge", "type")).toBe(
      "integer",
    );
    expect(Object.keys(at(schemas, "ApiKeyRecord", "properties") as Json)).toEqual([
      "ID",
      "CreatedAt",
      "UpdatedAt",
      "DeletedAt",
      "Name",
      "TokenHash",
      "AccountId",
      "Active",
      "LastUsedAt",
      // Extensions: the key's policy.
      "Scopes",
      "AllowedIps",
      "ExpiresAt",
    ]);
    // Extensions: a scheduled send's send_at, in both send bodies and answers; the bulk send's id.
    for (const path of ["/api/v1/sms", "/api/v1/sms/bulk"]) {
      const body = at(doc, "paths", path, "post", "requestBody", "content", "application/json", "schema");
      expect(at(body, "properties", "send_at", "format"), path).toBe("date-time");
      expect(at(body, "required"), path).not.toContain("send_at");
    }
    expect(at(schemas, "Message", "properties", "send_at", "format")).toBe("date-time");
    expect(at(schemas, "BulkResult", "properties", "send_at", "format")).toBe("date-time");
    expect(at(schemas, "BulkResult", "required")).toEqual([
      "bulk_id",
      "total",
      "charge",
      "currency",
      "items",
    ]);
    const send = at(doc, "paths", "/api/v1/sms", "post", "responses") as Json;
    expect(at(send, "202", "content", "application/json", "schema")).toEqual({
      $ref: "#/components/schemas/Message",
    });
    expect(Object.keys(send)).toEqual(["202", "400", "401", "403", "409", "413", "422", "429", "500", "503"]);
    // Each error response names one whole shape with its codes, never a base refined with allOf
    // (a strict validator judges each allOf branch alone and refused every real error's fields).
    expect(at(send, "422", "content", "application/json", "schema")).toEqual({
      $ref: "#/components/schemas/LegacyError_ERR_INSUFFICIENT_BALANCE",
    });
    expect(at(schemas, "LegacyError_ERR_INSUFFICIENT_BALANCE", "properties", "error", "properties")).toEqual({
      type: { type: "string", enum: ["ERR_INSUFFICIENT_BALANCE"], description: "the machine-readable code" },
      description: { type: "string" },
      validation_errors: { type: "array", items: { $ref: "#/components/schemas/FieldError" } },
    });
    expect(at(send, "401", "content", "application/json", "schema")).toEqual({
      $ref: "#/components/schemas/KitError_UNAUTHORIZED",
    });
    expect([...walk(doc)].filter(([where]) => where.endsWith("/allOf"))).toEqual([]);
  });
});

/** The entry whose path template matches a concrete path; a literal segment wins over a parameter. */
function entryFor(method: string, url: string): Endpoint {
  const path = url.split("?")[0] ?? "";
  const params = (e: Endpoint) => e.path.split("{").length;
  const entry = ENDPOINTS.filter(
    (e) =>
      e.method === method.toLowerCase() && new RegExp(`^${e.path.replace(/\{\w+\}/g, "[^/]+")}$`).test(path),
  ).sort((a, b) => params(a) - params(b))[0];
  if (!entry) throw new Error(`no entry for ${method} ${path}`);
  return entry;
}

const withoutFieldErrors = (body: unknown) => {
  const copy = structuredClone(body) as { error?: { validation_errors?: unknown } };
  if (copy?.error) delete copy.error.validation_errors;
  return copy;
};

/**
 * Calls the API: call() holds the answer to the document (status, media type, schema, headers);
 * an error must also be one of the examples of its status, texts and all.
 */
async function documentedCall(
  method: string,
  url: string,
  opts: { headers?: Record<string, string>; body?: unknown; rawBody?: string } = {},
) {
  const res = await call(t.base, method, url, { headers: acct.headers, ...opts });
  if (res.status >= 400) {
    const entry = entryFor(method, url);
    const documented = at(doc, "paths", entry.path, entry.method, "responses", String(res.status));
    const examples = Object.values(at(documented, "content", "application/json", "examples") as Json).map(
      (e) => at(doc, ...String(at(e, "$ref")).slice(2).split("/"), "value"),
    );
    expect(examples.map(withoutFieldErrors)).toContainEqual(withoutFieldErrors(res.body));
  }
  return res;
}

describe("real answers are what the document says", () => {
  it("sends, bulk sends and retrieves, with their errors", async () => {
    const body = { to: "+263771234567", from: "SHIRI", message: "Mhoro" };
    const sent = await documentedCall("POST", "/api/v1/sms", { body });
    expect(sent.status).toBe(202);
    const id = (sent.body as { id: string }).id;
    const idem = { ...acct.headers, "idempotency-key": "openapi-1" };
    expect((await documentedCall("POST", "/api/v1/sms", { headers: idem, body })).status).toBe(202);
    expect((await documentedCall("POST", "/api/v1/sms", { headers: idem, body })).status).toBe(202);
    const other = { ...body, message: "another" };
    expect((await documentedCall("POST", "/api/v1/sms", { headers: idem, body: other })).status).toBe(409);
    const bad = { ...acct.headers, "idempotency-key": "" };
    expect((await documentedCall("POST", "/api/v1/sms", { headers: bad, body })).status).toBe(400);
    const unroutable = await documentedCall("POST", "/api/v1/sms", { body: { ...body, to: "+15551234567" } });
    expect(unroutable.body).toMatchObject({ status: "failed", operator: "" });
    const unapproved = await documentedCall("POST", "/api/v1/sms", { body: { ...body, from: "NOPE" } });
    expect(unapproved.status).toBe(400);
    expect((await documentedCall("POST", "/api/v1/sms", { body: { to: "" } })).status).toBe(400);
    expect((await documentedCall("POST", "/api/v1/sms", { rawBody: "{" })).status).toBe(400);

    const bulk = { to: ["+263771234567", "+263712345678"], from: "SHIRI", message: "Mhoro" };
    expect((await documentedCall("POST", "/api/v1/sms/bulk", { body: bulk })).status).toBe(202);
    expect((await documentedCall("POST", "/api/v1/sms/bulk", { body: { ...bulk, to: [] } })).status).toBe(
      400,
    );
    expect((await documentedCall("POST", "/api/v1/sms/bulk", { rawBody: "[" })).status).toBe(400);
    const poor = await t.account({ balance: 0 });
    const broke = await documentedCall("POST", "/api/v1/sms/bulk", { headers: poor.headers, body: bulk });
    expect(broke.status).toBe(422);
    const broke1 = await documentedCall("POST", "/api/v1/sms", { headers: poor.headers, body });
    expect(broke1.status).toBe(422);

    expect((await documentedCall("GET", `/api/v1/sms/${id}`)).status).toBe(200);
    expect((await documentedCall("GET", "/api/v1/sms/12345")).status).toBe(400);
    expect((await documentedCall("GET", `/api/v1/sms/${crypto.randomUUID()}`)).status).toBe(404);
  });

  it("schedules and cancels sends, with their errors", async () => {
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const body = { to: "+263771234567", from: "SHIRI", message: "later", send_at: sendAt };
    const scheduled = await documentedCall("POST", "/api/v1/sms", { body });
    expect(scheduled.body).toMatchObject({ status: "enqueued", send_at: sendAt });
    const id = (scheduled.body as { id: string }).id;
    expect((await documentedCall("GET", `/api/v1/sms/${id}`)).body).toMatchObject({
      data: { send_at: sendAt },
    });
    const tooFar = new Date(Date.now() + 31 * 86_400_000).toISOString();
    expect((await documentedCall("POST", "/api/v1/sms", { body: { ...body, send_at: tooFar } })).status).toBe(
      400,
    );

    const cancelled = await documentedCall("DELETE", `/api/v1/sms/${id}`);
    expect(cancelled.body).toMatchObject({ data: { status: "failed", operator_response: "CANCELLED" } });
    expect((await documentedCall("DELETE", `/api/v1/sms/${id}`)).status).toBe(200);
    const unroutable = await documentedCall("POST", "/api/v1/sms", { body: { ...body, to: "+15551234567" } });
    const ended = (unroutable.body as { id: string }).id;
    expect((await documentedCall("DELETE", `/api/v1/sms/${ended}`)).status).toBe(409);
    expect((await documentedCall("DELETE", "/api/v1/sms/12345")).status).toBe(400);
    expect((await documentedCall("DELETE", `/api/v1/sms/${crypto.randomUUID()}`)).status).toBe(404);

    const bulk = { to: ["+263771234567", "+263712345678"], from: "SHIRI", message: "later", send_at: sendAt };
    const sent = await documentedCall("POST", "/api/v1/sms/bulk", { body: bulk });
    expect(sent.body).toMatchObject({ data: { send_at: sendAt, bulk_id: expect.any(String) } });
    const bulkId = (sent.body as { data: { bulk_id: string } }).data.bulk_id;
    expect(
      (await documentedCall("POST", "/api/v1/sms/bulk", { body: { ...bulk, send_at: "soon" } })).status,
    ).toBe(400);
    const bulkCancelled = await documentedCall("DELETE", `/api/v1/sms/bulk/${bulkId}`);
    expect(bulkCancelled.body).toMatchObject({ data: { total: 2, cancelled: 2, not_cancelled: 0 } });
    const lost = await documentedCall("POST", "/api/v1/sms/bulk", {
      body: { ...bulk, to: ["+15551234567"] },
    });
    const lostId = (lost.body as { data: { bulk_id: string } }).data.bulk_id;
    expect((await documentedCall("DELETE", `/api/v1/sms/bulk/${lostId}`)).status).toBe(409);
    expect((await documentedCall("DELETE", "/api/v1/sms/bulk/nope")).status).toBe(400);
    expect((await documentedCall("DELETE", `/api/v1/sms/bulk/${crypto.randomUUID()}`)).status).toBe(404);
  });

  it("previews, searches, exports and reads bulk sends back, with their errors", async () => {
    const bulk = { to: ["+263771234567", "+263712345678", "+15551234567"], from: "SHIRI", message: "Mhoro" };
    const preview = await documentedCall("POST", "/api/v1/sms/preview", { body: bulk });
    expect(preview.body).toMatchObject({ data: { total: 3, encoding: "gsm7" } });
    const single = { to: "+263771234567", from: "SHIRI", message: "Mhoro" };
    expect((await documentedCall("POST", "/api/v1/sms/preview", { body: single })).status).toBe(200);
    const unapproved = await documentedCall("POST", "/api/v1/sms/preview", {
      body: { ...bulk, from: "NOPE" },
    });
    expect(unapproved.status).toBe(400);
    expect((await documentedCall("POST", "/api/v1/sms/preview", { rawBody: "{" })).status).toBe(400);

    const sent = await documentedCall("POST", "/api/v1/sms/bulk", { body: bulk });
    const bulkId = (sent.body as { data: { bulk_id: string } }).data.bulk_id;
    const read = await documentedCall("GET", `/api/v1/sms/bulk/${bulkId}`);
    expect(read.body).toMatchObject({ data: { bulk_id: bulkId, total: 3 } });
    expect((await documentedCall("GET", "/api/v1/sms/bulk/nope")).status).toBe(404);
    expect((await documentedCall("GET", `/api/v1/sms/bulk/${crypto.randomUUID()}`)).status).toBe(404);

    const first = await documentedCall("GET", `/api/v1/sms?bulk_id=${bulkId}&limit=2`);
    const page = (first.body as { data: { items: unknown[]; next_cursor: string | null } }).data;
    expect(page.items).toHaveLength(2);
    expect(page.next_cursor).not.toBeNull();
    const cursor = encodeURIComponent(page.next_cursor ?? "");
    const last = await documentedCall("GET", `/api/v1/sms?bulk_id=${bulkId}&limit=2&cursor=${cursor}`);
    const rest = (last.body as { data: { items: { to: string }[]; next_cursor: string | null } }).data;
    expect(rest.next_cursor).toBeNull();
    const listed = [...page.items, ...rest.items].map((m) => (m as { to: string }).to);
    expect(listed.sort()).toEqual([...bulk.to].sort());
    expect((await documentedCall("GET", "/api/v1/sms?status=failed&since=2020-01-01T00:00:00Z")).status).toBe(
      200,
    );
    expect((await documentedCall("GET", "/api/v1/sms?limit=0")).status).toBe(400);
    expect((await documentedCall("GET", "/api/v1/sms?stauts=failed")).status).toBe(400);
    expect((await documentedCall("GET", `/api/v1/sms?cursor=${cursor}`)).status).toBe(400);

    const csv = await documentedCall("GET", `/api/v1/sms/export.csv?bulk_id=${bulkId}`);
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(String(csv.body).trimEnd().split("\r\n")).toHaveLength(4);
    expect((await documentedCall("GET", "/api/v1/sms/export.csv?since=yesterday")).status).toBe(400);
  });

  it("manages keys, reads the account, and runs the webhook endpoints, with their errors", async () => {
    const created = await documentedCall("POST", "/api/v1/api-tokens", { body: { name: "docs" } });
    expect(created.status).toBe(201);
    expect((await documentedCall("POST", "/api/v1/api-tokens", { body: {} })).status).toBe(400);
    expect((await documentedCall("GET", "/api/v1/api-tokens")).status).toBe(200);
    const keyId = (created.body as { data: { id: string } }).data.id;
    expect((await documentedCall("DELETE", `/api/v1/api-tokens/${keyId}`)).status).toBe(200);
    expect((await documentedCall("DELETE", "/api/v1/api-tokens/nope")).status).toBe(400);
    expect((await documentedCall("DELETE", `/api/v1/api-tokens/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await documentedCall("GET", "/api/v1/balance")).status).toBe(200);
    expect((await documentedCall("GET", "/api/v1/sender-ids")).status).toBe(200);

    expect((await documentedCall("GET", "/api/v1/webhook")).status).toBe(200);
    const hook = { url: "http://127.0.0.1:9/hooks", events: ["message.enqueued"] };
    const first = await documentedCall("PUT", "/api/v1/webhook", { body: hook });
    expect(first.body).toMatchObject({ data: { signing_secret: expect.any(String) } });
    const again = await documentedCall("PUT", "/api/v1/webhook", { body: hook });
    expect(again.body).not.toMatchObject({ data: { signing_secret: expect.anything() } });
    expect((await documentedCall("PUT", "/api/v1/webhook", { body: { url: "ftp://x" } })).status).toBe(400);
    expect((await documentedCall("GET", "/api/v1/webhook")).status).toBe(200);
    expect((await documentedCall("POST", "/api/v1/webhook/secret")).status).toBe(201);

    // An event to list and redeliver (the API role alone delivers nothing).
    await documentedCall("POST", "/api/v1/sms", {
      body: { to: "+263771234567", from: "SHIRI", message: "x" },
    });
    const listed = await documentedCall("GET", "/api/v1/webhook/deliveries?limit=5&state=pending");
    const events = (listed.body as { data: { id: string }[] }).data;
    expect(events.length).toBeGreaterThan(0);
    expect((await documentedCall("GET", "/api/v1/webhook/deliveries?limit=0")).status).toBe(400);
    const eventId = events[0]?.id;
    expect((await documentedCall("POST", `/api/v1/webhook/deliveries/${eventId}/redeliver`)).status).toBe(
      202,
    );
    const unknown = `/api/v1/webhook/deliveries/${crypto.randomUUID()}/redeliver`;
    expect((await documentedCall("POST", unknown)).status).toBe(404);
    const range = { since: "2020-01-01T00:00:00Z", until: new Date(Date.now() + 60_000).toISOString() };
    const redelivered = await documentedCall("POST", "/api/v1/webhook/deliveries/redeliver", { body: range });
    expect(redelivered.status).toBe(202);
    const backwards = { since: range.until, until: range.since };
    const refused = await documentedCall("POST", "/api/v1/webhook/deliveries/redeliver", { body: backwards });
    expect(refused.status).toBe(400);
    expect((await documentedCall("DELETE", "/api/v1/webhook")).status).toBe(200);
    expect((await documentedCall("GET", "/api/v1/openapi.json", { headers: {} })).status).toBe(200);
    expect((await documentedCall("GET", "/healthz", { headers: {} })).status).toBe(200);
    expect((await documentedCall("GET", "/readyz", { headers: {} })).body).toMatchObject({ status: "ready" });
  });

  it("over the rate limit: 429 as documented, in the endpoint's convention, with its headers", async () => {
    const limited = await startTestService({ RATE_LIMIT_KEY_PER_SECOND: "1" });
    try {
      const who = await limited.account();
      for (const url of ["/api/v1/balance", `/api/v1/sms/${crypto.randomUUID()}`]) {
        const answers = await Promise.all(
          Array.from({ length: 4 }, () => call(limited.base, "GET", url, { headers: who.headers })),
        );
        const refused = answers.find((a) => a.status === 429);
        expect(refused, url).toBeDefined();
        const entry = entryFor("GET", url);
        const documented = at(doc, "paths", entry.path, "get", "responses", "429");
        const examples = Object.values(at(documented, "content", "application/json", "examples") as Json).map(
          (e) => at(doc, ...String(at(e, "$ref")).slice(2).split("/"), "value"),
        );
        expect(examples, url).toContainEqual(refused?.body);
        for (const header of Object.keys(at(documented, "headers") as Json))
          expect(refused?.headers.get(header), `${url} ${header}`).not.toBeNull();
      }
    } finally {
      await limited.stop();
    }
  });

  it("every endpoint that needs a key answers 401 as documented, without one or with a bad one", async () => {
    const sample = (path: string) => path.replace(/\{\w+\}/g, crypto.randomUUID());
    for (const entry of ENDPOINTS.filter((e) => e.authenticated !== false)) {
      const url = sample(entry.path);
      const none = await documentedCall(entry.method, url, { headers: {} });
      expect(none.status, key(entry)).toBe(401);
      const badKey = { authorization: `Bearer shr_${"x".repeat(43)}` };
      expect((await documentedCall(entry.method, url, { headers: badKey })).status, key(entry)).toBe(401);
    }
  });
});
