import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { planVacuum, vacuumChurnedTables } from "../../src/db/vacuum.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/** Shiri's own vacuum pass, for servers that run with autovacuum off. */
let database: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 3);
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

const policy = {
  deadRows: 200,
  deadShare: 0.1,
  changedRows: 100_000,
  changedShare: 1,
  analyzeEverySeconds: 60,
};

/** A table's dead rows and ANALYZE count, as pg_stat_user_tables has them. */
async function tableStats(table: string): Promise<{ dead: number; analyses: number }> {
  // Statistics reach pg_stat_user_tables when a backend flushes them: force it for this one.
  await pool.query("SELECT pg_stat_force_next_flush()");
  const { rows } = await pool.query<{ dead: number; analyses: number }>(
    `SELECT n_dead_tup::int AS dead, analyze_count::int AS analyses
       FROM pg_stat_user_tables WHERE relname = $1 AND schemaname = current_schema()`,
    [table],
  );
  return rows[0] ?? { dead: -1, analyses: -1 };
}
const deadRows = async (table: string) => (await tableStats(table)).dead;

describe("vacuuming the churned tables", () => {
  it("plans VACUUM for dead rows past the policy, ANALYZE for changed ones at most every interval", () => {
    const table = (relname: string, counts: Partial<Record<string, number | null>>) => ({
      schemaname: "public",
      relname,
      n_live_tup: 1_000,
      n_dead_tup: 0,
      n_mod_since_analyze: 0,
      since_analyze: 3_600,
      ...counts,
    });
    const stats = [
      table("dead", { n_dead_tup: 500 }),
      table("dead_share_not_reached", { n_live_tup: 10_000, n_dead_tup: 500 }),
      table("dead_and_changed", { n_dead_tup: 500, n_mod_since_analyze: 300 }),
      table("dead_and_changed_lately", { n_dead_tup: 500, n_mod_since_analyze: 300, since_analyze: 10 }),
      table("changed", { n_mod_since_analyze: 300 }),
      table("changed_lately", { n_mod_since_analyze: 300, since_analyze: 59 }),
      table("changed_never_analysed", { n_mod_since_analyze: 300, since_analyze: null }),
      table("quiet", { n_mod_since_analyze: 199, since_analyze: null }),
    ];
    expect(planVacuum(stats, { ...policy, changedRows: 200, changedShare: 0.1 })).toEqual({
      vacuumed: ["public.dead", "public.dead_and_changed", "public.dead_and_changed_lately"],
      analyzed: ["public.dead_and_changed", "public.changed", "public.changed_never_analysed"],
    });
  });

  it("vacuums a table whose dead rows passed the threshold, and its dead rows are gone", async () => {
    const client = await pool.connect();
    try {
      await client.query(
        `INSERT INTO early_receipts (link, smsc_id, state)
         SELECT 'econet', 'id-' || g, 'DELIVRD' FROM generate_series(1, 1000) g`,
      );
      await client.query("DELETE FROM early_receipts");
      await client.query("SELECT pg_stat_force_next_flush()");
    } finally {
      client.release();
    }
    await expect.poll(() => deadRows("early_receipts")).toBeGreaterThanOrEqual(1000);

    const pass = await vacuumChurnedTables(pool, policy);
    expect(pass.vacuumed).toContain("public.early_receipts");
    await expect.poll(() => deadRows("early_receipts")).toBe(0);
  });

  it("vacuums the tables retention and the auth-failure counter delete from", async () => {
    const client = await pool.connect();
    try {
      // What a retention pass does to old inbound messages (src/retention/messages.ts).
      await client.query(
        `INSERT INTO inbound_messages (id, link, operator, "from", "to", body, encoding, parts, complete, received_at)
         SELECT gen_random_uuid(), 'econet', 'econet', '263771234567', '12345', 'hi', 'gsm7', 1, true,
                now() - interval '100 days'
           FROM generate_series(1, 1000)`,
      );
      await client.query("DELETE FROM inbound_messages");
      // What each flush of the auth-failure counter does (src/limits/auth-failures.ts).
      await client.query(
        `INSERT INTO auth_failures (address, window_start, failures)
         SELECT ('10.0.' || (g / 250) || '.' || (g % 250))::inet, now() - interval '10 minutes', 1
           FROM generate_series(1, 1000) g`,
      );
      await client.query("DELETE FROM auth_failures");
      await client.query("SELECT pg_stat_force_next_flush()");
    } finally {
      client.release();
    }
    await expect.poll(() => deadRows("inbound_messages")).toBeGreaterThanOrEqual(1000);
    await expect.poll(() => deadRows("auth_failures")).toBeGreaterThanOrEqual(1000);
    // Before, neither was on the list: with autovacuum off their dead rows were never reclaimed.
    const pass = await vacuumChurnedTables(pool, policy);
    expect(pass.vacuumed).toEqual(
      expect.arrayContaining(["public.inbound_messages", "public.auth_failures"]),
    );
  });

  it("analyses a changed table again only once the interval since its last ANALYZE has passed", async () => {
    const analyses = async () => (await tableStats("early_receipts")).analyses;
    const client = await pool.connect();
    try {
      await client.query("ANALYZE early_receipts");
      await client.query(
        `INSERT INTO early_receipts (link, smsc_id, state)
         SELECT 'econet', 'changed-' || g, 'DELIVRD' FROM generate_series(1, 500) g`,
      );
      await client.query("SELECT pg_stat_force_next_flush()");
    } finally {
      client.release();
    }
    const before = await analyses();
    const changed = { ...policy, changedRows: 100, changedShare: 0 };

    const soon = await vacuumChurnedTables(pool, { ...changed, analyzeEverySeconds: 3_600 });
    expect(soon.analyzed).not.toContain("public.early_receipts");
    expect(await analyses()).toBe(before);

    const later = await vacuumChurnedTables(pool, { ...changed, analyzeEverySeconds: 0 });
    expect(later.analyzed).toContain("public.early_receipts");
    await expect.poll(analyses).toBe(before + 1);
  });

  it("skips the pass while another process holds the vacuum lock", async () => {
    const other = await pool.connect();
    try {
      await other.query("SELECT pg_advisory_lock(7426002)");
      const pass = await vacuumChurnedTables(pool, { ...policy, deadRows: 0, deadShare: 0 });
      expect(pass).toEqual({ vacuumed: [], analyzed: [] });
    } finally {
      await other.query("SELECT pg_advisory_unlock(7426002)");
      other.release();
    }
  });
});
