import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.ts";
import { applyReceipts, sweepEarlyReceipts } from "../../src/receipts/apply-receipts.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/** Receipt matching at the database level: ids that match nothing yet, and ids that never will. */
let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

describe("receipts without a recorded segment", () => {
  it("are kept aside, then applied once the segment appears", async () => {
    const early = await withTransaction(pool, (tx) =>
      applyReceipts(tx, "econet", [{ smscId: "4242", state: "DELIVRD" }]),
    );
    expect(early).toMatchObject({ matched: 0, early: 1 });
    const account = await pool.query<{ id: string }>(
      "INSERT INTO accounts (id, name, currency) VALUES (gen_random_uuid(), 'r', 'USD') RETURNING id",
    );
    const message = await pool.query<{ id: string }>(
      `INSERT INTO messages (id, account_id, "to", body, sender_id, operator, encoding, segments, charge, charge_currency,
                             status, billing, received_at, created_at, accepted_at)
       VALUES (gen_random_uuid(), $1, '+263771234567', 'x', 'SHIRI', 'econet', 'gsm7', 1, 450, 'USD',
               'success', 'captured', now(), now(), now()) RETURNING id`,
      [account.rows[0]?.id],
    );
    const id = message.rows[0]?.id;
    await pool.query(
      "INSERT INTO message_parts (message_id, part_no, operator, smsc_id) VALUES ($1, 1, 'econet', '4242')",
      [id],
    );
    const swept = await withTransaction(pool, (tx) => sweepEarlyReceipts(tx, 600));
    expect(swept).toEqual({ applied: 1, unknown: [] });
    const { rows } = await pool.query(
      "SELECT operator_response, delivered_at IS NOT NULL AS delivered FROM messages WHERE id = $1",
      [id],
    );
    expect(rows[0]).toEqual({ operator_response: "DELIVRD", delivered: true });
  });

  it("are dropped and reported as unknown after the grace period", async () => {
    await withTransaction(pool, (tx) => applyReceipts(tx, "netone", [{ smscId: "999", state: "DELIVRD" }]));
    await pool.query(
      "UPDATE early_receipts SET received_at = now() - interval '1 hour' WHERE smsc_id = '999'",
    );
    const swept = await withTransaction(pool, (tx) => sweepEarlyReceipts(tx, 600));
    expect(swept.unknown).toEqual([{ operator: "netone", smsc_id: "999", state: "DELIVRD" }]);
    const left = await pool.query("SELECT count(*)::int AS n FROM early_receipts");
    expect(left.rows[0]).toEqual({ n: 0 });
  });
});
