/**
 * Behind a load balancer every request comes from the balancer's address. With the balancer in
 * TRUSTED_PROXIES, a key's allowed_ips and the failed-authentication limit judge the client the
 * balancer names in X-Forwarded-For; without it, the header is never believed. The tests reach
 * the API from loopback, which plays the balancer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

const bearer = (token: string, forwardedFor?: string) => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
  ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}),
});

async function keyFor(t: TestService, owner: TestAccount, allowedIps: string[]): Promise<string> {
  const res = await call(t.base, "POST", "/api/v1/api-tokens", {
    headers: owner.headers,
    body: { name: "office", allowed_ips: allowedIps },
  });
  expect(res.status).toBe(201);
  return (res.body as { data: { token: string } }).data.token;
}

const balance = (t: TestService, token: string, forwardedFor?: string) =>
  call(t.base, "GET", "/api/v1/balance", { headers: bearer(token, forwardedFor) });

/** An API of its own with these settings and an owner account, for the describe block that calls it. */
function apiWith(env: Record<string, string>): { t: TestService; owner: TestAccount } {
  const running = {} as { t: TestService; owner: TestAccount };
  beforeAll(async () => {
    running.t = await startTestService(env, "api");
    running.owner = await running.t.account();
  });
  afterAll(() => running.t?.stop());
  return running;
}

describe("with the balancer in TRUSTED_PROXIES", () => {
  const api = apiWith({ TRUSTED_PROXIES: "127.0.0.0/8,::1", AUTH_FAILURES_PER_MINUTE: "3" });

  it("a key's allowed_ips judge the address the balancer forwards", async () => {
    const office = await keyFor(api.t, api.owner, ["203.0.113.0/24"]);
    expect((await balance(api.t, office, "203.0.113.7")).status).toBe(200);
    expect((await balance(api.t, office, "198.51.100.4")).status).toBe(403);
    // What the client wrote before the balancer's own entry is not believed.
    expect((await balance(api.t, office, "203.0.113.7, 198.51.100.4")).status).toBe(403);
    // No header: the request is the balancer's own.
    expect((await balance(api.t, office)).status).toBe(403);
  });

  it("one client's failed authentications do not lock out the others behind the balancer", async () => {
    for (let i = 0; i < 3; i++) expect((await balance(api.t, "shr_bogus", "192.0.2.66")).status).toBe(401);
    // The counts are shared through the database a quarter of a second at a time.
    await expect.poll(async () => (await balance(api.t, api.owner.key, "192.0.2.66")).status).toBe(429);
    expect((await balance(api.t, api.owner.key, "192.0.2.67")).status).toBe(200);
  });
});

describe("without TRUSTED_PROXIES", () => {
  const api = apiWith({});

  it("X-Forwarded-For is never believed: the socket's peer is the client", async () => {
    const office = await keyFor(api.t, api.owner, ["203.0.113.0/24"]);
    expect((await balance(api.t, office, "203.0.113.7")).status).toBe(403);
    const here = await keyFor(api.t, api.owner, ["127.0.0.0/8", "::1"]);
    expect((await balance(api.t, here, "203.0.113.7")).status).toBe(200);
  });
});
