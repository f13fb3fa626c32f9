/**
 * `shiri start` and a signal before the service is up: a process waiting for another's migration
 * (its lock held here) ends on SIGTERM at once, with a line that says so, rather than silently.
 */
import { spawn } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, shiriCommand } from "../../bench/lib/shiri-process.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { waitFor } from "../support/wait-for.ts";

/** src/db/migrate.ts's advisory lock: held here, it keeps every start waiting. */
const MIGRATION_LOCK = 7_426_001;

let db: TestDatabase;
let holder: pg.Client;
beforeAll(async () => {
  db = await createTestDatabase();
  holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  await holder.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
});
afterAll(async () => {
  await holder?.end();
  await db?.drop();
});

describe("shiri start and a signal during start-up", () => {
  it("exits at once on SIGTERM, saying it stopped before the service started", async () => {
    const shiri = shiriCommand();
    const child = spawn(process.execPath, [shiri.bin, "start", "--role", "api"], {
      env: {
        ...process.env,
        ...shiri.env,
        DATABASE_URL: db.url,
        HOST: "127.0.0.1",
        PORT: String(await freePort()),
        METRICS_PORT: String(await freePort()),
        LOG_LEVEL: "info",
        SHIRI_ENV: "test",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      await waitFor(async () => output.includes("another process is migrating"), {
        timeoutMs: 30_000,
        intervalMs: 50,
        what: "the start to wait for the migration lock",
      });
      const signalled = Date.now();
      child.kill("SIGTERM");
      expect(await exited).toBe(143);
      expect(Date.now() - signalled).toBeLessThan(5_000);
      const lines = output
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { msg: string; signal?: string });
      expect(lines.at(-1)).toMatchObject({
        signal: "SIGTERM",
        msg: "signal during start-up: exiting before the service started",
      });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });
});
