/**
 * `shiri carrier check` holds one of the link's bind slots, which the workers need (every default
 * operator allows one bind), and is run during incidents, where it gets interrupted. Told to stop
 * (Ctrl-C, a closed terminal) it gives the slot back before it exits, saying it was interrupted;
 * killed outright, its slot is free again within one bind lease (BIND_LEASE_SECONDS), which it
 * renews while it runs, as a worker does.
 */
import { type ChildProcess, spawn } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, shiriCommand } from "../../bench/lib/shiri-process.ts";
import { BindSlot } from "../../src/dispatch/bind-slot.ts";
import { shiri } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { waitFor } from "../support/wait-for.ts";

let db: TestDatabase;
let client: pg.Client;
beforeAll(async () => {
  db = await createTestDatabase();
  // Migrated first: the check migrates too, but the slot table is read before it has.
  await shiri(db.url, ["migrate"]);
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

interface RunningCheck {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
}

/** `carrier check econet --to …` against a port where nothing listens: it keeps trying to bind. */
async function startCheck(env: Record<string, string> = {}): Promise<RunningCheck> {
  const command = shiriCommand();
  const child = spawn(
    process.execPath,
    [command.bin, "carrier", "check", "econet", "--to", "+263771234567", "--wait-seconds", "3600"],
    {
      env: {
        ...process.env,
        ...command.env,
        DATABASE_URL: db.url,
        SHIRI_ENV: "test",
        LOG_LEVEL: "silent",
        SMPP_ECONET_HOST: "127.0.0.1",
        SMPP_ECONET_PORT: String(await freePort()),
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/** The check's slot of econet, and how many seconds its lease has left. */
async function checkSlot(): Promise<{ seconds_left: number } | undefined> {
  const { rows } = await client.query<{ seconds_left: number }>(
    `SELECT extract(epoch FROM expires_at - now())::float8 AS seconds_left
       FROM smpp_bind_slots WHERE link = 'econet' AND owner LIKE 'carrier-check:%'`,
  );
  return rows[0];
}

const slotTaken = async () => (await checkSlot()) !== undefined;

/** A worker of econet (SMPP_ECONET_MAX_BINDS=1) tries to take its one slot. */
async function workerTakesTheSlot(): Promise<boolean> {
  const worker = new BindSlot(client, "econet", 1, `worker:test:${Math.random()}`, 15);
  const taken = (await worker.acquire()) === 0;
  if (taken) await worker.release();
  return taken;
}

describe("carrier check interrupted", () => {
  it("on Ctrl-C gives the link's bind slot back and exits 130 with one line saying so", async () => {
    const check = await startCheck();
    try {
      await waitFor(slotTaken, { timeoutMs: 30_000, intervalMs: 50, what: "the check to take the slot" });
      check.child.kill("SIGINT"); // the operator's Ctrl-C
      expect(await check.exited).toEqual({ code: 130, signal: null });
      expect(await workerTakesTheSlot()).toBe(true);
      expect(check.stderr()).toMatch(/^shiri: carrier check interrupted \(SIGINT\)[^\n]*\n$/);
      expect(check.stdout()).toBe("");
    } finally {
      if (check.child.exitCode === null && check.child.signalCode === null) check.child.kill("SIGKILL");
    }
  }, 60_000);

  it("on a closed terminal (SIGHUP) gives the slot back too", async () => {
    const check = await startCheck();
    try {
      await waitFor(slotTaken, { timeoutMs: 30_000, intervalMs: 50, what: "the check to take the slot" });
      check.child.kill("SIGHUP");
      expect(await check.exited).toEqual({ code: 129, signal: null });
      expect(await workerTakesTheSlot()).toBe(true);
    } finally {
      if (check.child.exitCode === null && check.child.signalCode === null) check.child.kill("SIGKILL");
    }
  }, 60_000);

  it("holds the slot on a lease it renews, so killed outright it frees the link within one lease", async () => {
    const leaseSeconds = 3;
    const check = await startCheck({ BIND_LEASE_SECONDS: String(leaseSeconds) });
    try {
      await waitFor(slotTaken, { timeoutMs: 30_000, intervalMs: 50, what: "the check to take the slot" });
      const takenAt = Date.now();
      expect((await checkSlot())?.seconds_left).toBeLessThanOrEqual(leaseSeconds);
      // Past one lease (the bind is tried for 10 s): renewed, it is still the check's.
      await new Promise((resolve) => setTimeout(resolve, (leaseSeconds + 1) * 1000));
      expect(check.child.exitCode).toBeNull();
      expect((await checkSlot())?.seconds_left).toBeGreaterThan(0);
      expect(await workerTakesTheSlot()).toBe(false);
      check.child.kill("SIGKILL");
      await check.exited;
      const killedAt = Date.now();
      await waitFor(workerTakesTheSlot, {
        timeoutMs: (leaseSeconds + 2) * 1000,
        intervalMs: 200,
        what: "the killed check's slot to be free",
      });
      expect(killedAt - takenAt).toBeGreaterThan(leaseSeconds * 1000);
    } finally {
      if (check.child.exitCode === null && check.child.signalCode === null) check.child.kill("SIGKILL");
    }
  }, 60_000);
});
