import { randomUUID } from "node:crypto";
import { getPriority } from "node:os";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ShiriProcess, startShiriProcesses } from "../../bench/lib/shiri-process.ts";
import type { Operator } from "../../carriers/index.ts";
import { type RunningSimulators, startSimulators } from "../../carriers/simulator/index.ts";
import { createAccount } from "../../src/accounts/accounts.ts";
import { addSenderId } from "../../src/accounts/sender-ids.ts";
import { createPool, withTransaction } from "../../src/db/pool.ts";
import { shiriAudit } from "../faults/support/invariants.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { smppEnv } from "../support/dispatch.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Scale-out: two API processes and two worker processes, real OS processes, on one database.
 * Sends go to both APIs; econet allows two binds (one per worker) and 40 submits a second between
 * them, counted at the simulator; netone allows one bind, held by one worker. That worker is
 * SIGKILLed mid-run: the other takes its netone slot once the lease runs out and finishes the
 * work, every message is delivered, is submitted once (but what was on the wire at the kill)
 * and billed once, and `shiri audit` is clean. A key revoked through one API is refused by the
 * other on the very next request. The workers run at the nice value WORKER_NICE gives them.
 */
const ECONET_TPS = 40;
const NETONE_TPS = 30;
const PER_OPERATOR = 100;
const MAX_BINDS: Record<Operator, number> = { econet: 2, netone: 1, telecel: 1 };
/** Not the default (5), so that the workers' nice value is seen to come from the setting. */
const WORKER_NICE = 7;

let db: TestDatabase;
let sql: pg.Client;
let sims: RunningSimulators;
let headers: Record<string, string>;
const apis: ShiriProcess[] = [];
const workers: ShiriProcess[] = [];
/** The most sessions each simulator had bound at once, sampled through the run. */
const maxBound: Record<Operator, number> = { econet: 0, netone: 0, telecel: 0 };
let sampling: ReturnType<typeof setInterval> | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  const setup = createPool(db.url, 1);
  const { key } = await withTransaction(setup, async (tx) => {
    const created = await createAccount(tx, {
      name: `scale-${randomUUID().slice(0, 8)}`,
      currency: "USD",
      openingBalance: 1_000_000_000,
    });
    await addSenderId(tx, created.account.id, "SHIRI", "verified");
    return created;
  });
  await setup.end();
  headers = { authorization: `Bearer ${key.token}`, "content-type": "application/json" };
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  sims = await startSimulators({
    host: "127.0.0.1",
    perOperator: {
      // The carriers enforce the limits too: a submit over them would come back ESME_RTHROTTLED.
      econet: { port: 0, behaviour: { tpsLimit: ECONET_TPS, submitLatencyMs: 20 } },
      netone: { port: 0, behaviour: { tpsLimit: NETONE_TPS, submitLatencyMs: 20 } },
      telecel: { port: 0 },
    },
  });
  sampling = setInterval(() => {
    for (const op of ["econet", "netone", "telecel"] as const)
      maxBound[op] = Math.max(maxBound[op], sims.get(op).boundSessions);
  }, 20);
  const { METRICS_PORT: _ephemeral, ...env } = smppEnv(sims.ports, {
    SMPP_ECONET_MAX_BINDS: String(MAX_BINDS.econet),
    SMPP_ECONET_TPS_LIMIT: String(ECONET_TPS),
    SMPP_NETONE_MAX_BINDS: String(MAX_BINDS.netone),
    SMPP_NETONE_TPS_LIMIT: String(NETONE_TPS),
    SMPP_TELECEL_MAX_BINDS: String(MAX_BINDS.telecel),
    // A dead worker's messages and jobs come back in seconds.
    DISPATCH_LOCK_SECONDS: "3",
    DISPATCH_JOB_EXPIRE_SECONDS: "3",
    QUEUE_SUPERVISE_SECONDS: "1",
    // Four processes on a Postgres other tests share: 2 pooled connections each (plus pg-boss's).
    PG_POOL_MAX: "2",
    WORKER_NICE: String(WORKER_NICE),
  });
  const roles = ["api", "api", "worker", "worker"] as const;
  const started = await startShiriProcesses(
    roles.map((role) => ({ role, databaseUrl: db.url, env, readyTimeoutMs: 60_000 })),
  );
  apis.push(...started.slice(0, 2));
  workers.push(...started.slice(2));
});

afterAll(async () => {
  if (sampling) clearInterval(sampling);
  for (const p of [...apis, ...workers]) await p.stop();
  await sims?.stop();
  await sql?.end().catch(() => {});
  await db?.drop();
});

/** Owners of each operator's bind slots, by slot. */
async function slots(): Promise<{ operator: string; slot: number; owner: string }[]> {
  const { rows } = await sql.query<{ operator: string; slot: number; owner: string }>(
    "SELECT link AS operator, slot, owner FROM smpp_bind_slots WHERE expires_at > now() ORDER BY link, slot",
  );
  return rows;
}

/** The worker a slot owner names (`host:pid:…`). */
const ownerPid = (owner: string) => Number(owner.split(":")[1]);

function destinations(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `+263${prefix}${String(2_000_000 + i)}`);
}

/** Sends each API accepted (202), by its pid. */
const acceptedBy = new Map<number, number>();

/** Single sends, `concurrency` at a time, alternating between the two APIs. */
async function sendAll(to: readonly string[], concurrency: number): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  let next = 0;
  const lane = async () => {
    while (next < to.length) {
      const i = next++;
      const api = apis[i % apis.length] as ShiriProcess;
      const res = await call(api.base, "POST", "/api/v1/sms", {
        headers,
        body: { to: to[i], from: "SHIRI", message: "scale-out" },
        signal: AbortSignal.timeout(20_000),
      });
      expect(res.status).toBe(202);
      acceptedBy.set(api.pid, (acceptedBy.get(api.pid) ?? 0) + 1);
      ids.set((res.body as { id: string }).id, to[i] as string);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return ids;
}

describe("two APIs and two workers on one database", () => {
  it("runs the workers at WORKER_NICE and the APIs at the priority they were started with", () => {
    // A child starts at its parent's nice value; a worker only ever raises its own.
    const started = getPriority();
    for (const worker of workers) expect(getPriority(worker.pid)).toBe(Math.max(started, WORKER_NICE));
    for (const api of apis) expect(getPriority(api.pid)).toBe(started);
  });

  it("sees a key revoked through one API refused by the other at once", async () => {
    const [a, b] = apis as [ShiriProcess, ShiriProcess];
    const created = await call(a.base, "POST", "/api/v1/api-tokens", {
      headers,
      body: { name: "scale-out" },
    });
    expect(created.status).toBe(201);
    const key = (created.body as { data: { id: string; token: string } }).data;
    const withKey = { authorization: `Bearer ${key.token}` };
    expect((await call(b.base, "GET", "/api/v1/balance", { headers: withKey })).status).toBe(200);
    const revoked = await call(a.base, "DELETE", `/api/v1/api-tokens/${key.id}`, { headers });
    expect(revoked.status).toBe(200);
    expect((await call(b.base, "GET", "/api/v1/balance", { headers: withKey })).status).toBe(401);
    expect((await call(a.base, "GET", "/api/v1/balance", { headers: withKey })).status).toBe(401);
  });

  it("spreads the work, holds the TPS limit across workers, and survives a worker killed mid-run", async () => {
    // Both workers bound to econet (one slot each), one of them to netone.
    await waitFor(
      async () => {
        const held = await slots();
        const econet = new Set(held.filter((s) => s.operator === "econet").map((s) => s.owner));
        return econet.size === 2 && held.some((s) => s.operator === "netone");
      },
      { timeoutMs: 20_000, what: "two econet binds and a netone bind" },
    );
    const netoneOwner = (await slots()).find((s) => s.operator === "netone")?.owner ?? "";
    const victim = workers.find((w) => w.pid === ownerPid(netoneOwner)) as ShiriProcess;
    const survivor = workers.find((w) => w !== victim) as ShiriProcess;
    expect(victim, `netone's slot owner ${netoneOwner} is one of the workers`).toBeDefined();

    const sent = await sendAll([...destinations("77", PER_OPERATOR), ...destinations("71", PER_OPERATOR)], 8);
    const ids = [...sent.keys()];
    const count = async (where: string) =>
      (
        await sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND ${where}`,
          [ids],
        )
      ).rows[0]?.n ?? 0;
    // Both APIs took their half of the sends.
    expect(sent.size).toBe(2 * PER_OPERATOR);
    expect([...acceptedBy.values()]).toEqual([PER_OPERATOR, PER_OPERATOR]);

    await waitFor(async () => (await count("operator = 'netone' AND status = 'success'")) >= 20, {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: "netone under way",
    });
    // Both workers have submitted to econet by now: two connections at the carrier.
    const econetConnections = new Set(sims.get("econet").accepted.map((a) => a.connection));
    expect(econetConnections.size).toBe(2);

    process.kill(victim.pid, "SIGKILL");
    await waitFor(async () => victim.exited(), { timeoutMs: 10_000, what: "the killed worker gone" });
    const { rows: onTheWire } = await sql.query<{ to: string }>(
      `SELECT "to" FROM messages m WHERE id = ANY($1) AND status = 'processing'
          AND NOT EXISTS (SELECT 1 FROM message_parts p WHERE p.message_id = m.id)`,
      [ids],
    );
    expect(await count("status = 'success'"), "the kill came before the end").toBeLessThan(ids.length);

    // The survivor takes the dead worker's netone slot once its lease runs out.
    await waitFor(
      async () => (await slots()).some((s) => s.operator === "netone" && ownerPid(s.owner) === survivor.pid),
      { timeoutMs: 20_000, what: "netone's slot taken over by the other worker" },
    );
    // Delivered: success, and the carrier's DELIVRD receipt applied.
    await waitFor(
      async () => (await count("status = 'success' AND delivered_at IS NOT NULL")) === ids.length,
      {
        timeoutMs: 40_000,
        intervalMs: 100,
        what: `all ${ids.length} messages delivered`,
      },
    );

    // Each slot held by one worker, never more binds than the carrier allows.
    for (const op of ["econet", "netone", "telecel"] as const)
      expect(maxBound[op], `${op} sessions bound at once`).toBeLessThanOrEqual(MAX_BINDS[op]);

    // The operator's TPS limit held across both workers, as the carrier counted: no sliding second
    // over the limit, and nothing throttled.
    const busiest: Record<string, number> = {};
    for (const [op, limit] of [
      ["econet", ECONET_TPS],
      ["netone", NETONE_TPS],
    ] as const) {
      const times = sims
        .get(op)
        .accepted.map((a) => a.at.getTime())
        .sort((x, y) => x - y);
      let most = 0;
      for (let i = 0, j = 0; i < times.length; i++) {
        while ((times[i] as number) - (times[j] as number) >= 1_000) j++;
        most = Math.max(most, i - j + 1);
      }
      busiest[op] = most;
      expect(most, `${op}: most submits in any second`).toBeLessThanOrEqual(limit);
      expect(sims.get(op).rejections, `${op}: throttled submits`).toEqual([]);
    }

    // Every message submitted once, but those on the wire at the kill (at most once more).
    const copies = new Map<string, number>();
    for (const op of ["econet", "netone"] as const)
      for (const a of sims.get(op).accepted)
        copies.set(a.destination_addr, (copies.get(a.destination_addr) ?? 0) + 1);
    const mayRepeat = new Set(onTheWire.map((r) => r.to.replace(/^\+/, "")));
    for (const to of sent.values()) {
      const n = copies.get(to.replace(/^\+/, "")) ?? 0;
      expect(n, `${to} submitted`).toBeGreaterThanOrEqual(1);
      if (!mayRepeat.has(to.replace(/^\+/, ""))) expect(n, `${to} submitted`).toBe(1);
      else expect(n, `${to} submitted`).toBeLessThanOrEqual(2);
    }

    const resent = [...copies.values()].reduce((n, c) => n + c - 1, 0);
    console.info(
      `[scale-out] ${ids.length} messages through 2 APIs and 2 workers; ${onTheWire.length} on the wire at the kill, ${resent} resent; busiest second at the carrier: econet ${busiest.econet}/${ECONET_TPS}, netone ${busiest.netone}/${NETONE_TPS}`,
    );

    // Billed once: one hold per message, every message captured, the captures (one ledger row a
    // settle) adding up to exactly their charges, and the ledger agreeing with every balance.
    const { rows: holds } = await sql.query<{ kind: string; n: number; messages: number }>(
      `SELECT kind, count(*)::int AS n, count(DISTINCT message_id)::int AS messages FROM ledger_entries
        WHERE message_id = ANY($1) GROUP BY kind ORDER BY kind`,
      [ids],
    );
    expect(holds).toEqual([{ kind: "hold", n: ids.length, messages: ids.length }]);
    const { rows: captures } = await sql.query<{ messages: number; charged: string; captured: string }>(
      `SELECT (SELECT count(*)::int FROM messages WHERE id = ANY($1) AND billing = 'captured') AS messages,
              (SELECT sum(charge)::text FROM messages WHERE billing = 'captured') AS charged,
              (SELECT sum(amount)::text FROM ledger_entries WHERE kind = 'capture') AS captured`,
      [ids],
    );
    expect(captures[0]?.messages).toBe(ids.length);
    expect(captures[0]?.captured).toBe(captures[0]?.charged);
    const audit = await shiriAudit(db.url);
    expect(audit.code, `shiri audit not clean:\n${audit.stdout}${audit.stderr}`).toBe(0);

    // Nobody died but the worker killed on purpose.
    for (const p of [...apis, survivor])
      expect(p.exited(), `process ${p.pid} exited:\n${p.output()}`).toBe(false);
  }, 120_000); // four processes on a shared machine: the run itself takes 15–30 s
});
