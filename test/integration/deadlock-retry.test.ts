import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransactionPastDeadlocks } from "../../src/db/pool.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/**
 * A transaction that Postgres ends to break a deadlock is tried again (a bulk cancel racing a
 * worker's claim answered 503 before): a real deadlock between two connections, the one under
 * test locking two rows in the other order.
 */
let database: TestDatabase;
let pool: pg.Pool;
let other: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 2, options: "-c deadlock_timeout=100ms" });
  await pool.query("CREATE TABLE deadlock_rows (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)");
  await pool.query("INSERT INTO deadlock_rows (id) VALUES (1), (2)");
  other = new pg.Client({ connectionString: database.url, options: "-c deadlock_timeout=10s" });
  await other.connect();
});
afterAll(async () => {
  await other?.end();
  await pool?.end();
  await database?.drop();
});

describe("a transaction ended by a deadlock", () => {
  it("is tried again, and its second try commits", async () => {
    await other.query("BEGIN");
    await other.query("UPDATE deadlock_rows SET n = n + 1 WHERE id = 1");
    let attempts = 0;
    const underTest = withTransactionPastDeadlocks(pool, async (tx) => {
      attempts++;
      await tx.query("UPDATE deadlock_rows SET n = n + 10 WHERE id = 2");
      if (attempts === 1) {
        // The other connection now waits for row 2 while this one waits for row 1: a cycle, and
        // this side's shorter deadlock_timeout makes it the one Postgres ends.
        void other.query("UPDATE deadlock_rows SET n = n + 1 WHERE id = 2").then(() => other.query("COMMIT"));
      }
      await tx.query("UPDATE deadlock_rows SET n = n + 10 WHERE id = 1");
      return attempts;
    });
    expect(await underTest).toBe(2);
    const { rows } = await pool.query<{ id: number; n: number }>(
      "SELECT id, n FROM deadlock_rows ORDER BY id",
    );
    expect(rows).toEqual([
      { id: 1, n: 11 },
      { id: 2, n: 11 },
    ]);
  });
});
