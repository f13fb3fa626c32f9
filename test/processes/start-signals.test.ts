/**
 * `shiri start` and a signal before the service is up: a process waiting for another's migration
 * (its lock held here) ends on SIGTERM at once, with a line that says so, rather than silently.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiProcess } from "../support/api-process.ts";
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
    const api = await startApiProcess(db.url);
    try {
      await waitFor(async () => api.output().includes("another process is migrating"), {
        timeoutMs: 30_000,
        intervalMs: 50,
        what: "the start to wait for the migration lock",
      });
      const signalled = Date.now();
      api.child.kill("SIGTERM");
      expect((await api.exited).code).toBe(143);
      expect(Date.now() - signalled).toBeLessThan(5_000);
      const lines = api
        .output()
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { msg: string; signal?: string });
      expect(lines.at(-1)).toMatchObject({
        signal: "SIGTERM",
        msg: "signal during start-up: exiting before the service started",
      });
    } finally {
      api.kill();
    }
  });
});
