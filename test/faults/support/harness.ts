import { randomUUID } from "node:crypto";
import pg from "pg";
import { type ShiriProcess, startShiriProcess } from "../../../bench/lib/shiri-process.ts";
import { OPERATORS, type Operator } from "../../../carriers/index.ts";
import {
  type RunningSimulators,
  type SimulatorBehaviour,
  startSimulators,
} from "../../../carriers/simulator/index.ts";
import { createAccount } from "../../../src/accounts/accounts.ts";
import { addSenderId } from "../../../src/accounts/sender-ids.ts";
import { createPool, withTransaction } from "../../../src/db/pool.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { smppEnv } from "../../support/dispatch.ts";

/**
 * Shiri as production runs it — an API process and a worker process on a database of this file's
 * own — against the carrier simulators in the test process, with settings short enough that every
 * fault resolves in seconds. Every HTTP answer the harness gets is kept for the invariants.
 */

/**
 * Callback retries in seconds rather than minutes. Dispatch's leases, job heartbeats and
 * supervision keep their defaults: how soon work moves on after a fault is what is tested.
 */
export const SHORT_SETTINGS: Record<string, string> = {
  WEBHOOK_POLL_MS: "20",
  WEBHOOK_RETRY_BASE_MS: "100",
  WEBHOOK_RETRY_MAX_DELAY_MS: "500",
  WEBHOOK_STRANDED_SWEEP_MS: "1000",
};

export interface FaultHarness {
  db: TestDatabase;
  /** The test's own connection to the service's database (never one a cut terminates). */
  sql: pg.Client;
  /** A new `sql` connection, after the database itself was restarted. */
  reconnect(): Promise<void>;
  sims: RunningSimulators;
  accountId: string;
  headers: Record<string, string>;
  api: ShiriProcess;
  worker: ShiriProcess;
  /** Every Shiri process started, and the pids the scenario killed on purpose. */
  processes: ShiriProcess[];
  killed: Set<number>;
  /** Every HTTP status the harness got from the API; 0 = no answer (reset, timeout). */
  statuses: number[];
  startWorker(): Promise<ShiriProcess>;
  startApi(): Promise<ShiriProcess>;
  /** SIGKILL, recorded as the scenario's doing; resolves once the process is gone. */
  kill(p: ShiriProcess): Promise<void>;
  /** POST /api/v1/sms; the id when accepted (202), else null. */
  send(to: string, message: string, extra?: Record<string, unknown>): Promise<string | null>;
  /** POST /api/v1/sms/bulk; the ids of the accepted items (throws unless 202). */
  bulk(to: readonly string[], message: string, extra?: Record<string, unknown>): Promise<string[]>;
  stop(): Promise<void>;
}

export interface FaultHarnessOptions {
  behaviour?: Partial<Record<Operator, Partial<SimulatorBehaviour>>>;
  /** Overrides of SHORT_SETTINGS and the SMPP settings, for both processes. */
  env?: Record<string, string>;
  /** A migrated database to run on instead of a clone on the test server (dropped by stop()). */
  database?: TestDatabase;
  /** Extra node flags for the API process (e.g. to preload a memory probe). */
  apiNodeFlags?: string[];
}

/** Destinations of one operator, unique within a file: `+263` + prefix + seven digits. */
export function numbers(operator: Operator, n: number, from: number): string[] {
  const prefix = { econet: "77", netone: "71", telecel: "73" }[operator];
  return Array.from({ length: n }, (_, i) => `+263${prefix}${String(1_000_000 + from + i)}`);
}

export async function startFaultHarness(opts: FaultHarnessOptions = {}): Promise<FaultHarness> {
  const db = opts.database ?? (await createTestDatabase());
  const setup = createPool(db.url, 1);
  const { account, key } = await withTransaction(setup, async (tx) => {
    const created = await createAccount(tx, {
      name: `faults-${randomUUID().slice(0, 8)}`,
      currency: "USD",
      openingBalance: 1_000_000_000,
    });
    await addSenderId(tx, created.account.id, "SHIRI", "verified");
    return created;
  });
  await setup.end();
  const connect = async () => {
    const client = new pg.Client({ connectionString: db.url });
    // A database restart ends this connection too: the event must not end the test process.
    client.on("error", () => {});
    await client.connect();
    return client;
  };
  const sql = await connect();
  const sims = await startSimulators({
    host: "127.0.0.1",
    perOperator: Object.fromEntries(
      OPERATORS.map((op) => [op, { port: 0, behaviour: opts.behaviour?.[op] }]),
    ),
  });
  // The launcher picks the metrics port it checks for readiness: the harness's "0" must not win.
  const { METRICS_PORT: _ephemeral, ...env } = smppEnv(sims.ports, { ...SHORT_SETTINGS, ...opts.env });
  const processes: ShiriProcess[] = [];
  const start = async (role: "api" | "worker") => {
    const nodeFlags = role === "api" ? opts.apiNodeFlags : undefined;
    const p = await startShiriProcess({ role, databaseUrl: db.url, env, nodeFlags });
    processes.push(p);
    return p;
  };
  const statuses: number[] = [];
  const headers = { authorization: `Bearer ${key.token}`, "content-type": "application/json" };
  const post = async (path: string, body: unknown): Promise<{ status: number; body: unknown }> => {
    try {
      const res = await fetch(`${h.api.base}${path}`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      statuses.push(res.status);
      return { status: res.status, body: await res.json().catch(() => null) };
    } catch {
      statuses.push(0);
      return { status: 0, body: null };
    }
  };
  const h: FaultHarness = {
    db,
    sql,
    sims,
    accountId: account.id,
    headers,
    api: await start("api"),
    worker: await start("worker"),
    processes,
    killed: new Set(),
    statuses,
    async reconnect() {
      await h.sql.end().catch(() => {});
      h.sql = await connect();
    },
    async startWorker() {
      h.worker = await start("worker");
      return h.worker;
    },
    async startApi() {
      h.api = await start("api");
      return h.api;
    },
    async kill(p) {
      h.killed.add(p.pid);
      process.kill(p.pid, "SIGKILL");
      const deadline = Date.now() + 10_000;
      while (!p.exited()) {
        if (Date.now() > deadline) throw new Error(`process ${p.pid} did not die of SIGKILL`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async send(to, message, extra = {}) {
      const res = await post("/api/v1/sms", { to, from: "SHIRI", message, ...extra });
      return res.status === 202 ? ((res.body as { id: string }).id ?? null) : null;
    },
    async bulk(to, message, extra = {}) {
      const res = await post("/api/v1/sms/bulk", { to, from: "SHIRI", message, ...extra });
      if (res.status !== 202) throw new Error(`bulk answered ${res.status}: ${JSON.stringify(res.body)}`);
      return (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    },
    async stop() {
      for (const p of processes) await p.stop();
      await sims.stop();
      await h.sql.end().catch(() => {});
      await db.drop();
    },
  };
  return h;
}
