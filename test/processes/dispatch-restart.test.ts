import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shiriCommand } from "../../bench/lib/shiri-process.ts";
import { OPERATORS } from "../../carriers/index.ts";
import { type RunningSimulators, startSimulators } from "../../carriers/simulator/index.ts";
import { balanceFromLedger } from "../../src/ledger/ledger.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { smppEnv } from "../support/dispatch.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A worker process killed with SIGKILL mid-batch and started again: every message ends final
 * exactly once, the ledger balances, and the only messages the carrier may see twice are those
 * that were on the wire (claimed, acceptance not yet recorded) at the kill.
 */
let sims: RunningSimulators;
let api: TestService;
let acct: TestAccount;
let workerEnv: NodeJS.ProcessEnv;
const children = new Set<ChildProcess>();

function startWorker(): ChildProcess {
  const shiri = shiriCommand();
  const child = spawn(process.execPath, [shiri.bin, "start", "--role", "worker"], {
    env: { ...workerEnv, ...shiri.env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  children.add(child);
  child.on("exit", () => children.delete(child));
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });

beforeAll(async () => {
  sims = await startSimulators({
    host: "127.0.0.1",
    perOperator: Object.fromEntries(
      OPERATORS.map((op) => [op, { port: 0, behaviour: { submitLatencyMs: 50, receiptDelayMs: 20 } }]),
    ),
  });
  const env = smppEnv(sims.ports, {
    DISPATCH_LOCK_SECONDS: "3",
    DISPATCH_JOB_EXPIRE_SECONDS: "3",
    QUEUE_SUPERVISE_SECONDS: "1",
  });
  api = await startTestService(env, "api");
  acct = await api.account({ balance: 100_000_000 });
  workerEnv = {
    ...process.env,
    ...env,
    DATABASE_URL: api.database.url,
    LOG_LEVEL: "error",
    SHIRI_ENV: "test",
  };
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await api.stop();
  await sims.stop();
});

describe("a worker killed mid-batch", () => {
  it("loses nothing, finishes each message once, and resends only what was on the wire", async () => {
    const prefixes = ["77", "71", "73"];
    const to = Array.from({ length: 1500 }, (_, i) => `+263${prefixes[i % 3]}${String(4_000_000 + i)}`);
    const res = await call(api.base, "POST", "/api/v1/sms/bulk", {
      headers: acct.headers,
      body: { to, from: "SHIRI", message: "restart test" },
    });
    expect(res.status).toBe(202);
    const ids = (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    const pool = api.service.pool;
    const count = async (status: string) =>
      (
        await pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND status = $2",
          [ids, status],
        )
      ).rows[0]?.n ?? 0;

    // Accepted segments are recorded as their answers arrive (src/dispatch/parts-recorder.ts), so
    // the kill comes once some are: answers take 50 ms, so most of the 1,500 are still to go.
    const recordedParts = async () =>
      (
        await pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM message_parts WHERE message_id = ANY($1)",
          [ids],
        )
      ).rows[0]?.n ?? 0;
    const first = startWorker();
    await waitFor(async () => (await recordedParts()) >= 200, {
      timeoutMs: 30_000,
      intervalMs: 10,
      what: "the first worker to get going",
    });
    first.kill("SIGKILL");
    await exited(first);

    // What the database knew at the kill: accepted segments are never to be sent again.
    const recorded = await pool.query<{ to: string }>(
      `SELECT m."to" FROM messages m WHERE m.id = ANY($1) AND EXISTS (SELECT 1 FROM message_parts p WHERE p.message_id = m.id)`,
      [ids],
    );
    const onTheWire = await pool.query<{ to: string }>(
      `SELECT "to" FROM messages WHERE id = ANY($1) AND status = 'processing'
          AND NOT EXISTS (SELECT 1 FROM message_parts p WHERE p.message_id = messages.id)`,
      [ids],
    );
    expect(recorded.rows.length).toBeGreaterThanOrEqual(200);
    expect(recorded.rows.length).toBeLessThan(1500);

    const second = startWorker();
    await waitFor(async () => (await count("success")) === 1500, {
      timeoutMs: 60_000,
      what: "every message to succeed",
    });
    second.kill("SIGTERM");
    expect(await exited(second)).toBe(0);

    // The carrier's view: how often each destination was accepted.
    const accepted = new Map<string, number>();
    for (const op of OPERATORS) {
      for (const a of sims.get(op).accepted) {
        if (a.text === "restart test")
          accepted.set(a.destination_addr, (accepted.get(a.destination_addr) ?? 0) + 1);
      }
    }
    expect(accepted.size).toBe(1500);
    const wire = (n: string) => n.replace(/^\+/, "");
    for (const { to: n } of recorded.rows)
      expect(accepted.get(wire(n)), `${n} was recorded as accepted`).toBe(1);
    const mayRepeat = new Set(onTheWire.rows.map((r) => wire(r.to)));
    const repeated = [...accepted].filter(([, c]) => c > 1).map(([n]) => n);
    for (const n of repeated)
      expect(mayRepeat.has(n), `${n} was sent twice but was not on the wire`).toBe(true);

    // Money: each message captured exactly once, nothing left held, ledger and balance agree (a
    // second capture of one would leave the ledger holding less than nothing).
    const captures = await pool.query<{ captured: number; other: number }>(
      `SELECT count(*) FILTER (WHERE billing = 'captured')::int AS captured,
              count(*) FILTER (WHERE billing <> 'captured')::int AS other
         FROM messages WHERE id = ANY($1)`,
      [ids],
    );
    expect(captures.rows[0]).toEqual({ captured: 1500, other: 0 });
    const balance = await balanceNow(pool, acct.id);
    expect(balance?.held).toBe(0);
    expect(await balanceFromLedger(pool, acct.id)).toEqual({ available: balance?.available, held: 0 });
  }, 120_000);
});
