import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, withTransaction } from "../../src/db/pool.ts";
import { applyReceipts, sweepEarlyReceipts } from "../../src/receipts/apply-receipts.ts";
import type { Receipt } from "../../src/receipts/read-receipt.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { insertSentMessage } from "../support/sent-message.ts";

/** Receipt matching at the database level: ids that match nothing yet, and ids that never will. */
let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, 2);
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
    const id = await insertSentMessage(pool, "4242");
    const swept = await withTransaction(pool, (tx) =>
      sweepEarlyReceipts(tx, 600, () => ({ tolerant: false })),
    );
    expect(swept).toMatchObject({ applied: 1, unknown: [] });
    expect(swept.results.flatMap((r) => r.result.notYetAccepted)).toEqual([]);
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
    const swept = await withTransaction(pool, (tx) =>
      sweepEarlyReceipts(tx, 600, () => ({ tolerant: false })),
    );
    expect(swept.unknown).toEqual([{ link: "netone", smsc_id: "999", state: "DELIVRD" }]);
    const left = await pool.query("SELECT count(*)::int AS n FROM early_receipts");
    expect(left.rows[0]).toEqual({ n: 0 });
  });
});

/** A `success` message of `parts` segments with these SMSC ids, accepted `ageHours` ago. */
async function acceptedMessage(operator: string, smscIds: string[], ageHours = 0): Promise<string> {
  const account = await pool.query<{ id: string }>(
    "INSERT INTO accounts (id, name, currency) VALUES (gen_random_uuid(), 'd', 'USD') RETURNING id",
  );
  const message = await pool.query<{ id: string }>(
    `INSERT INTO messages (id, account_id, "to", body, sender_id, operator, encoding, segments, charge, charge_currency,
                           status, billing, received_at, created_at, accepted_at)
     VALUES (gen_random_uuid(), $1, '+263771234567', 'x', 'SHIRI', $2, 'gsm7', $3, 450, 'USD',
             'success', 'captured', now(), now(), now()) RETURNING id`,
    [account.rows[0]?.id, operator, smscIds.length],
  );
  const id = message.rows[0]?.id ?? "";
  for (const [i, smscId] of smscIds.entries()) {
    await pool.query(
      `INSERT INTO message_parts (message_id, part_no, link, smsc_id, accepted_at)
       VALUES ($1, $2, $3, $4, now() - make_interval(hours => $5))`,
      [id, i + 1, operator, smscId, ageHours],
    );
  }
  return id;
}

async function messageState(id: string) {
  const { rows } = await pool.query(
    "SELECT operator_response, delivered_at IS NOT NULL AS delivered FROM messages WHERE id = $1",
    [id],
  );
  return rows[0];
}

const apply = (operator: "econet" | "netone" | "telecel", receipts: Receipt[]) =>
  withTransaction(pool, (tx) => applyReceipts(tx, operator, receipts));

describe("receipts in every shape", () => {
  it("let a final state beat an intermediate one for one id in the same batch, in either order", async () => {
    const a = await acceptedMessage("telecel", ["fin-a"]);
    const b = await acceptedMessage("telecel", ["fin-b"]);
    const r = await apply("telecel", [
      { smscId: "fin-a", state: "ENROUTE" },
      { smscId: "fin-a", state: "DELIVRD" },
      { smscId: "fin-b", state: "DELIVRD" },
      { smscId: "fin-b", state: "ACCEPTD" },
    ]);
    expect(await messageState(a)).toEqual({ operator_response: "DELIVRD", delivered: true });
    expect(await messageState(b)).toEqual({ operator_response: "DELIVRD", delivered: true });
    expect(r).toMatchObject({ matched: 4, early: 0, duplicates: 2 });
  });

  it("never end a message on an intermediate state, nor undo a final one with it", async () => {
    const id = await acceptedMessage("telecel", ["mid-1"]);
    await apply("telecel", [{ smscId: "mid-1", state: "ENROUTE" }]);
    expect(await messageState(id)).toEqual({ operator_response: "", delivered: false });
    await apply("telecel", [{ smscId: "mid-1", state: "UNDELIV", err: "027" }]);
    const late = await apply("telecel", [{ smscId: "mid-1", state: "ACCEPTD" }]);
    expect(late.duplicates).toBe(1);
    expect(await messageState(id)).toEqual({ operator_response: "UNDELIV err:027", delivered: false });
  });

  it("set every segment from one receipt when the carrier sends one per message", async () => {
    const id = await acceptedMessage("telecel", ["pm-1", "pm-2", "pm-3"]);
    const first = await apply("telecel", [{ smscId: "pm-3", state: "DELIVRD", scope: "message" }]);
    expect(await messageState(id)).toEqual({ operator_response: "DELIVRD", delivered: true });
    expect(first).toMatchObject({ matched: 1, duplicates: 0 });
    // The same receipt again changes no segment: a duplicate, whichever segment it names.
    const again = await apply("telecel", [
      { smscId: "pm-3", state: "DELIVRD", scope: "message" },
      { smscId: "pm-1", state: "DELIVRD" },
    ]);
    expect(again).toMatchObject({ matched: 2, duplicates: 2 });
  });

  it("match a reused id to the most recent submit, never to one older than the validity", async () => {
    const old = await acceptedMessage("netone", ["reused"], 24 * 90);
    const recent = await acceptedMessage("netone", ["reused"], 1);
    const after = new Date(Date.now() - 25 * 3_600_000);
    await apply("netone", [{ smscId: "reused", state: "DELIVRD", submittedAfter: after }]);
    expect(await messageState(recent)).toEqual({ operator_response: "DELIVRD", delivered: true });
    expect(await messageState(old)).toEqual({ operator_response: "", delivered: false });

    // Only the months-old submit has this id: the receipt waits for a newer one instead.
    const stale = await acceptedMessage("netone", ["only-old"], 24 * 90);
    const r = await apply("netone", [{ smscId: "only-old", state: "DELIVRD", submittedAfter: after }]);
    expect(r).toMatchObject({ matched: 0, early: 1 });
    expect(await messageState(stale)).toEqual({ operator_response: "", delivered: false });
    const swept = await withTransaction(pool, (tx) =>
      sweepEarlyReceipts(tx, 600, () => ({ tolerant: false })),
    );
    expect(swept.applied).toBe(0);
  });
});

describe("receipts on a young table", () => {
  it("find and update their segments by key before message_parts has any statistics", async () => {
    // As on a new install: thousands of segments, never analysed (autovacuum kept away).
    await pool.query("ALTER TABLE message_parts SET (autovacuum_enabled = false)");
    await pool.query(
      `WITH a AS (INSERT INTO accounts (id, name, currency) VALUES (gen_random_uuid(), 'young', 'USD') RETURNING id),
            m AS (INSERT INTO messages (id, account_id, "to", body, sender_id, operator, encoding, segments, charge,
                                        charge_currency, status, billing, received_at, created_at, accepted_at)
                  SELECT gen_random_uuid(), a.id, '+26377' || (1000000 + i), 'x', 'SHIRI', 'econet', 'gsm7', 1, 450,
                         'USD', 'success', 'captured', now(), now(), now()
                    FROM a, generate_series(1, 5000) i
                  RETURNING id, "to")
       INSERT INTO message_parts (message_id, part_no, link, smsc_id) SELECT id, 1, 'econet', 'young-' || "to" FROM m`,
    );
    const receipts = Array.from({ length: 40 }, (_, i) => ({
      smscId: `young-+26377${1_002_000 + i}`,
      state: "DELIVRD",
    }));
    // A connection of its own: the counts below are its session's, not yet sent to the server.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // The plan a prepared statement settles on after its first runs, made now.
      await client.query("SET plan_cache_mode = force_generic_plan");
      await client.query("BEGIN");
      const applied = await applyReceipts(client, "econet", receipts);
      // This transaction's own reads of the table: rows read by scanning it, rows found by an index.
      const { rows } = await client.query<{ scanned: number; indexed: number }>(
        `SELECT seq_tup_read::int AS scanned, idx_tup_fetch::int AS indexed
           FROM pg_stat_xact_user_tables WHERE relname = 'message_parts'`,
      );
      await client.query("COMMIT");
      expect(applied).toMatchObject({ matched: 40, early: 0, duplicates: 0 });
      expect(applied.delivered).toHaveLength(40);
      expect(rows[0]?.scanned).toBe(0);
      expect(rows[0]?.indexed).toBeGreaterThanOrEqual(40);
    } finally {
      await client.end();
    }
  });
});
