import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort, type ShiriProcess, startShiriProcess } from "../../bench/lib/shiri-process.ts";
import { OPERATORS, type Operator } from "../../carriers/index.ts";
import { type RunningSimulators, startSimulators } from "../../carriers/simulator/index.ts";
import { createAccount } from "../../src/accounts/accounts.ts";
import { createPool, withTransaction } from "../../src/db/pool.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { smppEnv } from "../support/dispatch.ts";
import { call, startTestService, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * GET /healthz and /readyz on the API port and on the metrics port: ready, and not ready when
 * the database is behind the code's migrations, when it cannot be reached, or when a worker's
 * operators are not bound. No key is needed and no rate limit applies.
 */
const get = (base: string, path: string) => call(base, "GET", path);
const metricsBase = (port: number) => `http://127.0.0.1:${port}`;

interface Readiness {
  status: string;
  checks: {
    database: { ok: boolean; error?: string };
    migrations?: { ok: boolean; applied: number; expected: number; missing: string[] };
    operators?: Record<string, { ok: boolean; state: string }>;
  };
}

describe("the API role", () => {
  let t: TestService;
  beforeAll(async () => {
    // One request a second per key: probes would be refused at once if they were limited.
    t = await startTestService({ RATE_LIMIT_KEY_PER_SECOND: "1" });
  });
  afterAll(() => t?.stop());
  const ports = () => [t.base, metricsBase(t.service.metricsPort)];

  it("/healthz answers 200 on both ports", async () => {
    for (const base of ports()) {
      const res = await get(base, "/healthz");
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: "ok" });
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("answers HEAD as it answers GET on both ports, without a body (load balancers probe so)", async () => {
    for (const base of ports()) {
      for (const path of ["/healthz", "/readyz"]) {
        const res = await fetch(base + path, { method: "HEAD" });
        expect(res.status, `HEAD ${base}${path}`).toBe(200);
        expect(await res.text()).toBe("");
      }
    }
  });

  it("/readyz is 200 on both ports with what it checked, and needs no key and counts against no limit", async () => {
    for (const base of ports()) {
      const answers = await Promise.all(Array.from({ length: 8 }, () => get(base, "/readyz")));
      for (const res of answers) {
        expect(res.status).toBe(200);
        const body = res.body as Readiness;
        expect(body.status).toBe("ready");
        expect(body.checks.database).toEqual({ ok: true });
        expect(body.checks.migrations?.ok).toBe(true);
        expect(body.checks.migrations?.missing).toEqual([]);
        expect(body.checks.migrations?.applied).toBe(body.checks.migrations?.expected);
        // The api role dispatches nothing: no operators are checked.
        expect(body.checks.operators).toBeUndefined();
        expect(res.headers.get("ratelimit-limit")).toBeNull();
      }
    }
    // Probes carrying a key do not take from it either.
    const acct = await t.account();
    for (let i = 0; i < 3; i++) expect((await get(t.base, "/readyz")).status).toBe(200);
    const res = await call(t.base, "GET", "/healthz", { headers: acct.headers });
    expect(res.status).toBe(200);
    const balance = await call(t.base, "GET", "/api/v1/balance", { headers: acct.headers });
    expect(balance.status).toBe(200);
    expect(balance.headers.get("ratelimit-remaining")).toBe("0");
  });

  it("/readyz is 503 with Retry-After on both ports while the database lacks one of the code's migrations", async () => {
    const { rows } = await t.service.pool.query<{ version: string }>(
      "DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations) RETURNING version",
    );
    const removed = rows[0]?.version as string;
    try {
      for (const base of ports()) {
        let last: Awaited<ReturnType<typeof get>> | undefined;
        await waitFor(
          async () => {
            last = await get(base, "/readyz");
            return last.status === 503;
          },
          { timeoutMs: 5_000, intervalMs: 100, what: `${base}/readyz to say not ready` },
        );
        const body = last?.body as Readiness;
        expect(body.status).toBe("not ready");
        expect(body.checks.database).toEqual({ ok: true });
        expect(body.checks.migrations).toMatchObject({ ok: false, missing: [removed] });
        expect(last?.headers.get("retry-after")).toMatch(/^\d+$/);
        // Alive all the same.
        expect((await get(base, "/healthz")).status).toBe(200);
      }
    } finally {
      await t.service.pool.query("INSERT INTO schema_migrations (version) VALUES ($1)", [removed]);
    }
    for (const base of ports()) {
      await waitFor(async () => (await get(base, "/readyz")).status === 200, {
        timeoutMs: 5_000,
        intervalMs: 100,
        what: `${base}/readyz ready again`,
      });
    }
  });
});

describe("a worker", () => {
  let t: TestService | undefined;
  let sims: RunningSimulators | undefined;
  afterAll(async () => {
    await t?.stop();
    await sims?.stop();
  });

  it("is not ready while its operators are not bound, and ready once they are", async () => {
    // Carriers that are not there yet: ports nobody listens on.
    const ports = Object.fromEntries(
      await Promise.all(OPERATORS.map(async (op) => [op, await freePort()] as const)),
    ) as Record<Operator, number>;
    t = await startTestService(smppEnv(ports), "worker");
    expect(t.service.port).toBeNull();
    const readyz = () => get(metricsBase((t as TestService).service.metricsPort), "/readyz");

    let last: Awaited<ReturnType<typeof get>> | undefined;
    await waitFor(
      async () => {
        last = await readyz();
        const operators = (last.body as Readiness).checks.operators ?? {};
        return OPERATORS.every((op) => operators[op]?.state === "unbound");
      },
      { timeoutMs: 20_000, intervalMs: 100, what: "every operator unbound" },
    );
    expect(last?.status).toBe(503);
    expect(last?.headers.get("retry-after")).toMatch(/^\d+$/);
    const notReady = last?.body as Readiness;
    expect(notReady.status).toBe("not ready");
    expect(notReady.checks.database).toEqual({ ok: true });
    expect(notReady.checks.migrations?.ok).toBe(true);
    for (const op of OPERATORS)
      expect(notReady.checks.operators?.[op]).toEqual({ ok: false, state: "unbound" });
    expect((await get(metricsBase(t.service.metricsPort), "/healthz")).status).toBe(200);

    // The carriers come up where the worker looks for them.
    sims = await startSimulators({
      host: "127.0.0.1",
      perOperator: Object.fromEntries(OPERATORS.map((op) => [op, { port: ports[op] }])),
    });
    await waitFor(
      async () => {
        last = await readyz();
        return last.status === 200;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 100,
        what: "the worker ready once bound",
      },
    );
    const ready = last?.body as Readiness;
    expect(ready.status).toBe("ready");
    for (const op of OPERATORS) expect(ready.checks.operators?.[op]).toEqual({ ok: true, state: "bound" });
  }, 60_000);
});

describe("the database unreachable", () => {
  let db: TestDatabase;
  let api: ShiriProcess | undefined;
  /** A connection to the server's admin database: a database cannot close its doors from inside. */
  let server: pg.Client;
  let key = "";
  const dbName = () => new URL(db.url).pathname.slice(1);

  beforeAll(async () => {
    db = await createTestDatabase();
    const setup = createPool(db.url, 1);
    key = (
      await withTransaction(setup, (tx) =>
        createAccount(tx, { name: "health", currency: "USD", openingBalance: 1_000_000 }),
      )
    ).key.token;
    await setup.end();
    server = new pg.Client({ connectionString: inject("adminDatabaseUrl") });
    await server.connect();
    api = await startShiriProcess({ role: "api", databaseUrl: db.url, readyTimeoutMs: 60_000 });
  }, 90_000);
  afterAll(async () => {
    await server?.query(`ALTER DATABASE "${dbName()}" WITH ALLOW_CONNECTIONS true`).catch(() => {});
    await api?.stop();
    await server?.end();
    await db?.drop();
  });

  it("/readyz is 503 on both ports, /healthz still 200, and the API's 503s carry Retry-After in their own shapes", async () => {
    const running = api as ShiriProcess;
    const ports = [running.base, metricsBase(running.metricsPort)];
    for (const base of ports) expect((await get(base, "/readyz")).status).toBe(200);

    await server.query(`ALTER DATABASE "${dbName()}" WITH ALLOW_CONNECTIONS false`);
    await server.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [dbName()],
    );
    try {
      for (const base of ports) {
        let last: Awaited<ReturnType<typeof get>> | undefined;
        await waitFor(
          async () => {
            last = await get(base, "/readyz");
            return last.status === 503;
          },
          {
            timeoutMs: 10_000,
            intervalMs: 100,
            what: `${base}/readyz to say not ready`,
          },
        );
        expect(last?.body).toEqual({
          status: "not ready",
          checks: { database: { ok: false, error: "unreachable" } },
        });
        expect(last?.headers.get("retry-after")).toMatch(/^\d+$/);
        expect((await get(base, "/healthz")).status).toBe(200);
      }

      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const send = await call(running.base, "POST", "/api/v1/sms", {
        headers,
        body: { to: "+263771234567", from: "SHIRI", message: "down" },
      });
      expect(send.status).toBe(503);
      expect(send.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(send.body).toMatchObject({ status: "", error: { type: "ERR_SERVICE_UNAVAILABLE" } });
      const balance = await call(running.base, "GET", "/api/v1/balance", { headers });
      expect(balance.status).toBe(503);
      expect(balance.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(balance.body).toMatchObject({ status: "error", error: { code: "SERVICE_UNAVAILABLE" } });
    } finally {
      await server.query(`ALTER DATABASE "${dbName()}" WITH ALLOW_CONNECTIONS true`);
    }
    for (const base of ports) {
      await waitFor(async () => (await get(base, "/readyz")).status === 200, {
        timeoutMs: 15_000,
        intervalMs: 100,
        what: `${base}/readyz ready again`,
      });
    }
    expect(running.exited()).toBe(false);
  }, 90_000);
});
