import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditPass } from "../../src/audit/audit-pass.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * The worker's periodic audit (src/audit/audit-pass.ts): each kind of problem found, counted, and
 * nothing on a clean database; one process at a time; the gauge set by the worker by itself.
 */
let t: TestService;
let acct: TestAccount;
beforeAll(async () => {
  t = await startTestService({ PORT: "0" }, "api");
  acct = await t.account({ balance: 10_000_000 });
});
afterAll(async () => {
  await t?.stop();
});

const options = { stuckMinutes: 60, receiptHours: 48, validityHours: 24, afterLedgerId: null };

async function send(): Promise<string> {
  const res = await call(t.base, "POST", "/api/v1/sms", {
    headers: acct.headers,
    body: {
      to: `+26377${String(1_000_000 + Math.floor(Math.random() * 8_999_999))}`,
      from: "SHIRI",
      message: "a",
    },
  });
  expect(res.status).toBe(202);
  return (res.body as { id: string }).id;
}

describe("the periodic audit", () => {
  it("finds nothing on a clean database, then each kind of problem", async () => {
    const [stuck, orphan, overdue] = [await send(), await send(), await send()];
    expect((await auditPass(t.service.pool, options))?.problems).toEqual({
      balance_mismatches: 0,
      holds_without_live_message: 0,
      stuck_messages: 0,
      parts_without_receipts: 0,
    });
    const q = (text: string, values: unknown[] = []) => t.service.pool.query(text, values);
    // Stuck: waiting two hours (the watermark, which never passes an open message, with it).
    await q("UPDATE messages SET received_at = now() - interval '2 hours' WHERE id = $1", [stuck]);
    await q("UPDATE upkeep_marks SET at = now() - interval '3 hours' WHERE name = 'open_messages'");
    // A hold no live message will ever move: failed, its charge still held.
    await q("UPDATE messages SET status = 'failed' WHERE id = $1", [orphan]);
    // A segment accepted 48.5 hours ago with no receipt since.
    await q(
      `UPDATE messages SET status = 'success', billing = 'captured', received_at = now() - interval '48.5 hours'
        WHERE id = $1`,
      [overdue],
    );
    await q(
      `INSERT INTO ledger_entries (account_id, kind, amount)
       SELECT account_id, 'capture', charge FROM messages WHERE id = $1`,
      [overdue],
    );
    await q(
      `INSERT INTO message_parts (message_id, part_no, link, smsc_id, accepted_at)
       VALUES ($1, 1, 'econet', 'old-1', now() - interval '48.5 hours')`,
      [overdue],
    );
    // A balance that no longer adds up from the ledger.
    await q("UPDATE account_balances SET balance = balance + 1 WHERE account_id = $1", [acct.id]);
    const pass = await auditPass(t.service.pool, options);
    expect(pass?.problems).toEqual({
      balance_mismatches: 1,
      holds_without_live_message: 1,
      stuck_messages: 1,
      parts_without_receipts: 1,
    });
    expect(pass?.accountsChecked).toBeGreaterThanOrEqual(1);
    // The next pass looks only at accounts whose ledger moved since: none did.
    const next = await auditPass(t.service.pool, { ...options, afterLedgerId: pass?.lastLedgerId ?? null });
    expect(next?.problems.balance_mismatches).toBe(0);
    expect(next?.accountsChecked).toBe(0);
    expect(next?.problems.stuck_messages).toBe(1);
  });

  it("one process at a time: a pass that finds the lock taken does nothing", async () => {
    const holder = await t.service.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(7426017)");
      expect(await auditPass(t.service.pool, options)).toBeNull();
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
  });
});

describe("the worker's audit", () => {
  it("sets shiri_audit_problems by itself", async () => {
    const w = await startTestService({ AUDIT_INTERVAL_MS: "200", START_SIMULATORS: "false" }, "worker");
    try {
      await waitFor(async () => (await w.service.metrics.auditProblems.get()).values.length === 4, {
        timeoutMs: 10_000,
        what: "the worker's first audit pass",
      });
      const values = (await w.service.metrics.auditProblems.get()).values;
      expect(values.map((v) => [v.labels.kind, v.value]).sort()).toEqual([
        ["balance_mismatches", 0],
        ["holds_without_live_message", 0],
        ["parts_without_receipts", 0],
        ["stuck_messages", 0],
      ]);
    } finally {
      await w.stop();
    }
  });
});
