import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
});
afterAll(() => t.stop());

const bearer = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

describe("POST /api/v1/api-tokens", () => {
  it("creates a key, returns its secret once, and stores only its SHA-256", async () => {
    const res = await call(t.base, "POST", "/api/v1/api-tokens", {
      headers: acct.headers,
      body: { name: "billing-service" },
    });
    expect(res.status).toBe(201);
    const body = res.body as { status: string; message: string; data: Record<string, string> };
    expect(body.status).toBe("success");
    expect(body.message).toMatch(/save/i);
    expect(body.message).toMatch(/once/i);
    // The contract's fields, and the key policy's (extensions: null for every scope, anywhere, always).
    expect(Object.keys(body.data).sort()).toEqual([
      "account_id",
      "allowed_ips",
      "created_at",
      "expires_at",
      "id",
      "name",
      "scopes",
      "token",
    ]);
    expect(body.data).toMatchObject({ scopes: null, allowed_ips: null, expires_at: null });
    expect(body.data).toMatchObject({ name: "billing-service", account_id: acct.id });
    const token = body.data.token as string;
    const { rows } = await t.service.pool.query("SELECT token_hash FROM api_keys WHERE id = $1", [
      body.data.id,
    ]);
    expect(rows[0]?.token_hash).toBe(createHash("sha256").update(token).digest("hex"));
    const stored = await t.service.pool.query(
      "SELECT count(*)::int AS n FROM api_keys WHERE token_hash = $1",
      [token],
    );
    expect(stored.rows[0]).toEqual({ n: 0 });
    // The new key authenticates as the same account.
    const balance = await call(t.base, "GET", "/api/v1/balance", { headers: bearer(token) });
    expect(balance.status).toBe(200);
  });

  it("a missing name is a Kit validation error on `name`", async () => {
    const res = await call(t.base, "POST", "/api/v1/api-tokens", { headers: acct.headers, body: {} });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status: "error",
      message: "Validation failed",
      error: {
        code: "VALIDATION_ERROR",
        description: "One or more fields failed validation",
        validation_errors: [{ field: "name", description: "is required" }],
      },
    });
  });
});

describe("POST /api/v1/api-tokens: each bad extension field told once, in words", () => {
  const SCOPE_LIST = "sms:send, sms:read, inbound:read, keys:manage, webhooks:manage, account:read";
  const NETWORK = "must be an IPv4 or IPv6 address or CIDR with no bit set past its prefix (10.0.0.0/8)";
  const cases: [string, Record<string, unknown>, string, string][] = [
    ["scopes as a string", { scopes: "sms:send" }, "scopes", "must be an array of scopes"],
    ["no scope", { scopes: [] }, "scopes", "must name at least one scope"],
    ["an unknown scope", { scopes: ["bogus"] }, "scopes", `must contain only ${SCOPE_LIST}`],
    ["a scope twice", { scopes: ["sms:send", "sms:send"] }, "scopes", "must not repeat a scope"],
    ["allowed_ips null", { allowed_ips: null }, "allowed_ips", "must be an array of addresses or CIDRs"],
    ["no address", { allowed_ips: [] }, "allowed_ips", "must name at least one address or CIDR"],
    [
      "21 addresses",
      { allowed_ips: Array.from({ length: 21 }, (_, i) => `10.0.0.${i}`) },
      "allowed_ips",
      "must name at most 20 addresses or CIDRs",
    ],
    // Postgres's cidr refuses bits past the prefix: these were a 500.
    ["bits past the prefix", { allowed_ips: ["10.0.0.1/8"] }, "allowed_ips[0]", NETWORK],
    ["an IPv6 one", { allowed_ips: ["::1", "2001:db8::1/32"] }, "allowed_ips[1]", NETWORK],
    ["an IPv6 zone", { allowed_ips: ["fe80::1%eth0"] }, "allowed_ips[0]", NETWORK],
    [
      "not a time",
      { expires_at: "x" },
      "expires_at",
      "must be an RFC 3339 date-time with a time zone offset",
    ],
    ["a past time", { expires_at: "2020-01-01T00:00:00Z" }, "expires_at", "must be in the future"],
  ];
  it.each(cases)("%s", async (_, fields, field, description) => {
    const res = await call(t.base, "POST", "/api/v1/api-tokens", {
      headers: acct.headers,
      body: { name: "x", ...fields },
    });
    expect(res.status).toBe(400);
    expect((res.body as { error: { validation_errors: unknown } }).error.validation_errors).toEqual([
      { field, description },
    ]);
  });

  it("a network written with its prefix is kept as written", async () => {
    const res = await call(t.base, "POST", "/api/v1/api-tokens", {
      headers: acct.headers,
      body: { name: "x", allowed_ips: ["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"] },
    });
    expect(res.status).toBe(201);
    expect((res.body as { data: { allowed_ips: string[] } }).data.allowed_ips).toEqual([
      "10.0.0.0/8",
      "2001:db8::/32",
      "192.0.2.7/32",
    ]);
  });
});

describe("GET /api/v1/api-tokens", () => {
  it("lists the account's keys as PascalCase records with an empty message", async () => {
    const res = await call(t.base, "GET", "/api/v1/api-tokens", { headers: acct.headers });
    expect(res.status).toBe(200);
    const body = res.body as { status: string; message: string; data: Record<string, unknown>[] };
    expect(body.status).toBe("success");
    expect(body.message).toBe("");
    const mine = body.data.find((k) => k.ID === acct.keyId);
    expect(mine).toBeDefined();
    expect(Object.keys(mine ?? {}).sort()).toEqual(
      [
        "AccountId",
        "Active",
        "AllowedIps",
        "CreatedAt",
        "DeletedAt",
        "ExpiresAt",
        "ID",
        "LastUsedAt",
        "Scopes",
        "Name",
        "TokenHash",
        "UpdatedAt",
      ].sort(),
    );
    expect(mine).toMatchObject({ Active: true, AccountId: acct.id, Name: "default" });
    expect(typeof mine?.LastUsedAt).toBe("string"); // this very request used it
    for (const key of body.data) expect(key.AccountId).toBe(acct.id);
  });

  it("does not show another account's keys", async () => {
    const other = await t.account();
    const res = await call(t.base, "GET", "/api/v1/api-tokens", { headers: other.headers });
    const ids = (res.body as { data: { ID: string }[] }).data.map((k) => k.ID);
    expect(ids).toEqual([other.keyId]);
  });
});

describe("DELETE /api/v1/api-tokens/{id}", () => {
  const createKey = async (name: string) => {
    const res = await call(t.base, "POST", "/api/v1/api-tokens", { headers: acct.headers, body: { name } });
    return (res.body as { data: { id: string; token: string } }).data;
  };

  it("revokes at once, also for another API process on the same database", async () => {
    const key = await createKey("to-revoke");
    const other = await t.startAnother();
    try {
      expect((await call(other.base, "GET", "/api/v1/balance", { headers: bearer(key.token) })).status).toBe(
        200,
      );
      const res = await call(t.base, "DELETE", `/api/v1/api-tokens/${key.id}`, { headers: acct.headers });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: "success", message: "api token revoked" });
      for (const base of [t.base, other.base]) {
        const denied = await call(base, "GET", "/api/v1/balance", { headers: bearer(key.token) });
        expect(denied.status).toBe(401);
        expect(denied.body).toMatchObject({ status: "error", error: { code: "UNAUTHORIZED" } });
      }
      const list = await call(t.base, "GET", "/api/v1/api-tokens", { headers: acct.headers });
      expect(
        (list.body as { data: { ID: string; Active: boolean }[] }).data.find((k) => k.ID === key.id),
      ).toMatchObject({
        Active: false,
      });
    } finally {
      await other.stop();
    }
  });

  it("revoking an already revoked key is 200 again", async () => {
    const key = await createKey("twice");
    expect(
      (await call(t.base, "DELETE", `/api/v1/api-tokens/${key.id}`, { headers: acct.headers })).status,
    ).toBe(200);
    const again = await call(t.base, "DELETE", `/api/v1/api-tokens/${key.id}`, { headers: acct.headers });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ status: "success", message: "api token revoked" });
  });

  it("an invalid id is 400 invalid token id; an unknown or foreign id is 404 NOT_FOUND", async () => {
    const bad = await call(t.base, "DELETE", "/api/v1/api-tokens/not-a-uuid", { headers: acct.headers });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      status: "error",
      message: "invalid token id",
      error: { code: "BAD_REQUEST", description: "invalid token id" },
    });
    const unknown = await call(t.base, "DELETE", "/api/v1/api-tokens/00000000-0000-4000-8000-000000000000", {
      headers: acct.headers,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ status: "error", error: { code: "NOT_FOUND" } });
    const other = await t.account();
    const foreign = await call(t.base, "DELETE", `/api/v1/api-tokens/${other.keyId}`, {
      headers: acct.headers,
    });
    expect(foreign.status).toBe(404);
    expect((await call(t.base, "GET", "/api/v1/balance", { headers: other.headers })).status).toBe(200);
  });
});

describe("authentication on every endpoint", () => {
  const endpoints: [string, string][] = [
    ["POST", "/api/v1/sms"],
    ["GET", "/api/v1/sms/00000000-0000-4000-8000-000000000000"],
    ["POST", "/api/v1/sms/bulk"],
    ["POST", "/api/v1/api-tokens"],
    ["GET", "/api/v1/api-tokens"],
    ["DELETE", "/api/v1/api-tokens/00000000-0000-4000-8000-000000000000"],
    ["GET", "/api/v1/balance"],
    ["GET", "/api/v1/sender-ids"],
  ];

  it.each(endpoints)("%s %s without a key is 401 missing authentication (Kit)", async (method, path) => {
    const res = await call(t.base, method, path, {
      headers: { "content-type": "application/json" },
      body: method === "GET" ? undefined : {},
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      status: "error",
      message: "missing authentication",
      error: { code: "UNAUTHORIZED", description: "missing authentication" },
    });
  });

  it.each(endpoints)("%s %s with a malformed or unknown key is 401 (Kit)", async (method, path) => {
    for (const authorization of ["Bearer", "Basic abc", "Bearer shr_short", `Bearer shr_${"A".repeat(43)}`]) {
      const res = await call(t.base, method, path, {
        headers: { authorization },
        body: method === "GET" ? undefined : {},
      });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({
        status: "error",
        message: "missing authentication",
        error: { code: "UNAUTHORIZED" },
      });
    }
  });
});

describe("extensions", () => {
  it("GET /api/v1/balance shows available and held in ten-thousandths", async () => {
    const fresh = await t.account({ balance: 10_000 });
    await call(t.base, "POST", "/api/v1/sms", {
      headers: fresh.headers,
      body: { to: "+263771234567", from: "SHIRI", message: "x" },
    });
    const res = await call(t.base, "GET", "/api/v1/balance", { headers: fresh.headers });
    expect(res.body).toEqual({
      status: "success",
      message: "request successful",
      data: { currency: "USD", available: 9_550, held: 450 },
    });
  });

  it("GET /api/v1/sender-ids lists address and verification_status", async () => {
    const fresh = await t.account({ senders: ["SHIRI", "Acme"] });
    const res = await call(t.base, "GET", "/api/v1/sender-ids", { headers: fresh.headers });
    expect(res.body).toEqual({
      status: "success",
      message: "request successful",
      data: [
        { address: "SHIRI", verification_status: "verified" },
        { address: "Acme", verification_status: "verified" },
      ],
    });
  });
});

describe("authentication of many requests at once", () => {
  it("answers each of the requests in flight by its own key, whatever the others carry", async () => {
    const first = await t.account({ senders: ["FIRST"] });
    const second = await t.account({ senders: ["SECOND"] });
    const revoked = await t.account({ senders: ["REVOKED"] });
    expect(
      (await call(t.base, "DELETE", `/api/v1/api-tokens/${revoked.keyId}`, { headers: revoked.headers }))
        .status,
    ).toBe(200);
    const unknown = `shr_${"A".repeat(43)}`;
    const keys = [first.key, second.key, revoked.key, unknown, "not-a-key"];
    const expected = ["FIRST", "SECOND", null, null, null];
    // Sent together, so that the lookups share statements (src/intake/auth.ts batches them).
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, n) =>
        call(t.base, "GET", "/api/v1/sender-ids", { headers: bearer(keys[n % keys.length] as string) }),
      ),
    );
    answers.forEach((res, n) => {
      const sender = expected[n % keys.length];
      if (sender === null) {
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ status: "error", error: { code: "UNAUTHORIZED" } });
      } else {
        expect(res.status).toBe(200);
        expect((res.body as { data: { address: string }[] }).data.map((s) => s.address)).toEqual([sender]);
      }
    });
  });
});
