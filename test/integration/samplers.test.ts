import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createPool, isDatabaseOutOfReach, type Pool } from "../../src/db/pool.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { startSamplers } from "../../src/samplers.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { loggedLines } from "../support/log-lines.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Sampling that keeps failing says so: the queue, stalled-message and callback-backlog gauges
 * would otherwise keep their last values with nothing in the log, and their alerts never fire.
 * Here a lock on pgboss.job makes every pass fail on its lock timeout (the database answers, so
 * this is no outage the log's outage lines would count): one warning at the first failure, none
 * for the passes after it, and one line when sampling succeeds again.
 */
let db: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, 2, {
    statementMs: 5_000,
    lockMs: 100,
    idleInTransactionMs: 60_000,
    connectMs: 5_000,
  });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe("samplers that fail", () => {
  it("warn once when sampling starts failing, and say when it succeeds again", async () => {
    const { lines, logger } = loggedLines(isDatabaseOutOfReach);
    const lockers = createPool(db.url, 1);
    const locker = await lockers.connect();
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE pgboss.job IN ACCESS EXCLUSIVE MODE");
    const metrics = createMetrics();
    const config = loadConfig({ DATABASE_URL: "postgres://unused" });
    const samplers = startSamplers(metrics, pool, config, logger, { everyMs: 50 });
    try {
      // Passes every 50 ms or so, each failing after the 100 ms lock timeout: several in a second.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(lines.map((l) => [l.level, l.msg])).toEqual([
        [40, "sampling failed: the queue, open-message and callback-backlog gauges keep their last values"],
      ]);
      expect(lines[0]?.err).toMatchObject({ code: "55P03" });
      await locker.query("COMMIT");
      await waitFor(() => lines.length > 1, { timeoutMs: 5_000, what: "the line saying sampling succeeds" });
      expect(lines[1]).toMatchObject({ level: 30, msg: "sampling succeeds again" });
      expect(lines[1]?.failures).toBeGreaterThanOrEqual(3);
    } finally {
      samplers.stop();
      locker.release();
      await lockers.end();
    }
  });
});
