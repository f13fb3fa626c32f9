import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ShiriProcess, startShiriProcess } from "../../bench/lib/shiri-process.ts";
import { type RunningSimulators, startSimulators } from "../../carriers/simulator/index.ts";
import { createAccount } from "../../src/accounts/accounts.ts";
import { addSenderId } from "../../src/accounts/sender-ids.ts";
import { createPool, withTransaction } from "../../src/db/pool.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { smppEnv } from "../support/dispatch.ts";
import { UndocumentedAnswer } from "../support/openapi-responses.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Nothing dies of a lost connection: the service's database backends are terminated under
 * traffic, twice, and then the database refuses connections for a while. The API and the worker
 * run as processes of their own, so "still alive" means the process really did not exit.
 */

interface Answer {
  status: number;
  retryAfter: string | null;
  code: string | null;
  /** Which phase of the fault the answer arrived in. */
  phase: string;
}

let db: TestDatabase;
/** A connection to the service's own database, never terminated by the cuts it makes. */
let admin: pg.Client;
/** A connection to the server's admin database: a database cannot close its doors from inside. */
let server: pg.Client;
let sims: RunningSimulators | undefined;
let headers: Record<string, string>;
const processes: ShiriProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const setup = createPool(db.url, 1);
  const { key } = await withTransaction(setup, async (tx) => {
    const created = await createAccount(tx, {
      name: `outage-${randomUUID().slice(0, 8)}`,
      currency: "USD",
      openingBalance: 1_000_000_000,
    });
    await addSenderId(tx, created.account.id, "SHIRI", "verified");
    return created;
  });
  await setup.end();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  server = new pg.Client({ connectionString: inject("adminDatabaseUrl") });
  await server.connect();
  headers = { authorization: `Bearer ${key.token}`, "content-type": "application/json" };
});

afterAll(async () => {
  for (const p of processes) await p.stop();
  await server?.query(`ALTER DATABASE "${dbName()}" WITH ALLOW_CONNECTIONS true`).catch(() => {});
  await server?.end();
  await admin?.end();
  await sims?.stop();
  await db?.drop();
});

const dbName = () => new URL(db.url).pathname.slice(1);

async function start(role: "api" | "worker", env: Record<string, string> = {}): Promise<ShiriProcess> {
  const p = await startShiriProcess({ role, databaseUrl: db.url, env });
  processes.push(p);
  return p;
}

/** Terminates every backend of the service's database but the test's own; how many it ended. */
async function cut(): Promise<number> {
  const { rows } = await admin.query<{ ended: boolean }>(
    `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  return rows.filter((r) => r.ended).length;
}

/**
 * Concurrent senders that keep posting until stopped, recording every answer (0 = no answer). An
 * answer the OpenAPI document does not describe stops the traffic and fails the wait or the stop.
 */
function traffic(base: string, concurrency: number) {
  const answers: Answer[] = [];
  const ids: string[] = [];
  let phase = "before";
  let running = true;
  let undocumented: UndocumentedAnswer | undefined;
  const loop = async () => {
    while (running) {
      try {
        const res = await call(base, "POST", "/api/v1/sms", {
          headers,
          body: { to: "+263771234567", from: "SHIRI", message: "outage" },
          signal: AbortSignal.timeout(15_000),
        });
        const body = res.body as { id?: string; error?: { type?: string } } | null;
        if (res.status === 202 && body?.id) ids.push(body.id);
        answers.push({
          status: res.status,
          retryAfter: res.headers.get("retry-after"),
          code: body?.error?.type ?? null,
          phase,
        });
      } catch (err) {
        if (err instanceof UndocumentedAnswer) {
          undocumented ??= err;
          running = false;
        } else answers.push({ status: 0, retryAfter: null, code: null, phase });
      }
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    answers,
    ids,
    setPhase(name: string) {
      phase = name;
    },
    /** Waits until `n` more answers of the given status (any when omitted) have arrived. */
    async more(n: number, status?: number, timeoutMs = 20_000) {
      const count = () => answers.filter((a) => status === undefined || a.status === status).length;
      const target = count() + n;
      await waitFor(
        () => {
          if (undocumented) throw undocumented;
          return count() >= target;
        },
        {
          timeoutMs,
          intervalMs: 20,
          what: `${n} more answers of ${status ?? "any status"} (so far ${JSON.stringify(summary(answers))})`,
        },
      );
    },
    async stop() {
      running = false;
      await Promise.all(loops);
      if (undocumented) throw undocumented;
    },
  };
}

function expectAlive(p: ShiriProcess): void {
  expect(p.exited(), `the process exited:\n${p.output()}`).toBe(false);
}

function summary(answers: readonly Answer[]) {
  const out: Record<string, number> = {};
  for (const a of answers) out[`${a.phase}:${a.status}`] = (out[`${a.phase}:${a.status}`] ?? 0) + 1;
  return out;
}

describe("database outage", () => {
  it("the API stays up: 202 or 503 with Retry-After during the cuts, nothing else, and serves after", async () => {
    const api = await start("api");
    const load = traffic(api.base, 6);
    try {
      await load.more(30, 202);

      load.setPhase("cut");
      expect(await cut()).toBeGreaterThan(0);
      await load.more(20);
      expectAlive(api);
      expect(await cut()).toBeGreaterThan(0);
      await load.more(20);
      expectAlive(api);

      // The database refuses every connection for a while: each answer must be a 503.
      load.setPhase("refused");
      await server.query(`ALTER DATABASE "${dbName()}" WITH ALLOW_CONNECTIONS false`);
      await cut();
      await load.more(20, 503);
      await server.query(`ALTER DATABASE "${dbName()}" WITH ALLOW_CONNECTIONS true`);

      load.setPhase("after");
      await load.more(30, 202);
    } finally {
      await load.stop();
    }

    const seen = summary(load.answers);
    expectAlive(api);
    expect(
      load.answers.filter((a) => a.status !== 202 && a.status !== 503),
      JSON.stringify(seen),
    ).toEqual([]);
    const unavailable = load.answers.filter((a) => a.status === 503);
    expect(unavailable.length).toBeGreaterThanOrEqual(20);
    for (const a of unavailable) {
      expect(a.retryAfter).toMatch(/^\d+$/);
      expect(a.code).toBe("ERR_SERVICE_UNAVAILABLE");
    }
    // Every 202 was written; a 503 may hide a commit whose answer the cut swallowed, never more.
    const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM messages");
    const accepted = load.answers.filter((a) => a.status === 202).length;
    expect(rows[0]?.n).toBeGreaterThanOrEqual(accepted);
    expect(rows[0]?.n).toBeLessThanOrEqual(accepted + unavailable.length);
    console.info("api answers by phase:", seen);
  }, 90_000);

  it("a worker stays up through the cuts and dispatches everything accepted", async () => {
    sims = await startSimulators({
      host: "127.0.0.1",
      perOperator: { econet: { port: 0 }, netone: { port: 0 }, telecel: { port: 0 } },
    });
    // The launcher picks the metrics port it checks for readiness: the harness's "0" must not win.
    const { METRICS_PORT: _ephemeral, ...env } = smppEnv(sims.ports, {
      // Work cut off mid-flight is taken up again in seconds, not the production five minutes.
      DISPATCH_LOCK_SECONDS: "3",
      DISPATCH_JOB_EXPIRE_SECONDS: "3",
      QUEUE_SUPERVISE_SECONDS: "1",
    });
    const api = await start("api");
    const worker = await start("worker", env);
    const load = traffic(api.base, 2);
    try {
      await load.more(20, 202);
      load.setPhase("cut");
      expect(await cut()).toBeGreaterThan(0);
      await load.more(10);
      expectAlive(worker);
      expect(await cut()).toBeGreaterThan(0);
      await load.more(10);
      expectAlive(worker);
      load.setPhase("after");
      await load.more(20, 202);
    } finally {
      await load.stop();
    }
    const ids = [...load.ids];
    await waitFor(
      async () => {
        const { rows } = await admin.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND status IN ('success', 'failed')",
          [ids],
        );
        return rows[0]?.n === ids.length;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: `${ids.length} messages to settle` },
    );
    const { rows } = await admin.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM messages WHERE id = ANY($1) GROUP BY status",
      [ids],
    );
    expect(rows).toEqual([{ status: "success", n: ids.length }]);
    expectAlive(worker);
    expectAlive(api);
    console.info("worker phase answers:", summary(load.answers));
  }, 120_000);
});
