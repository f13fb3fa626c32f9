/**
 * Randomised interleavings of the lifecycle moves that race in production — a sender's cancel, a
 * batch's claim, the validity sweep, a settle's acceptance or refusal, a lease given up or run out —
 * on a few messages, by fast-check: after each run every message is in one state, every hold was
 * captured or released exactly once, and `shiri audit` finds nothing (balances equal their ledger,
 * no hold of a final message).
 */
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audit } from "../../src/audit/audit.ts";
import { withTransaction } from "../../src/db/pool.ts";
import { balanceFromLedger, balanceOf } from "../../src/ledger/ledger.ts";
import { cancelMessages } from "../../src/lifecycle/cancel.ts";
import { claimMessages } from "../../src/lifecycle/claim.ts";
import { expireMessages } from "../../src/lifecycle/expire.ts";
import { giveUpLease, markAccepted, markRefused } from "../../src/lifecycle/outcomes.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService({}, "api");
  acct = await t.account({ balance: 1_000_000_000 });
});
afterAll(() => t?.stop());

/** Two runs contend: each claims with its own owner, as two workers' batches do. */
const OWNERS = [randomUUID(), randomUUID()];

const move = fc.oneof(
  fc.record({ kind: fc.constant("cancel" as const), message: fc.nat(2) }),
  fc.record({ kind: fc.constant("claim" as const), message: fc.nat(2), run: fc.nat(1) }),
  fc.record({ kind: fc.constant("accept" as const), message: fc.nat(2), run: fc.nat(1) }),
  fc.record({ kind: fc.constant("refuse" as const), message: fc.nat(2), run: fc.nat(1) }),
  fc.record({ kind: fc.constant("give_up" as const), message: fc.nat(2), run: fc.nat(1) }),
  fc.record({ kind: fc.constant("lease_runs_out" as const), message: fc.nat(2) }),
  fc.record({ kind: fc.constant("expire" as const), message: fc.nat(2) }),
);
type Move = typeof move extends fc.Arbitrary<infer M> ? M : never;

async function sendThree(): Promise<string[]> {
  const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
    headers: acct.headers,
    body: { to: ["+263771000001", "+263771000002", "+263771000003"], from: "SHIRI", message: "race" },
  });
  expect(res.status).toBe(202);
  return (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
}

async function apply(ids: readonly string[], m: Move): Promise<void> {
  const id = ids[m.message] as string;
  const owner = "run" in m ? (OWNERS[m.run] as string) : "";
  await withTransaction(t.service.pool, async (tx) => {
    switch (m.kind) {
      case "cancel":
        return void (await cancelMessages(tx, acct.id, { messageId: id }));
      case "claim":
        return void (await claimMessages(tx, [id], { owner, lockSeconds: 60, validityHours: 24 }));
      case "accept":
        return void (await markAccepted(tx, [{ id, response: "ESME_ROK", delivered: false }], owner));
      case "refuse":
        return void (await markRefused(tx, [{ id, response: "ESME_RINVDSTADR", error: "refused" }], owner));
      case "give_up":
        return void (await giveUpLease(tx, [{ id, error: "retry" }], owner));
      case "lease_runs_out":
        return void (await tx.query(
          "UPDATE messages SET locked_until = now() - interval '1 second' WHERE id = $1",
          [id],
        ));
      case "expire":
        // Past its validity: what the sweeper or a claim finds.
        await tx.query("UPDATE messages SET received_at = now() - interval '2 days' WHERE id = $1", [id]);
        return void (await expireMessages(tx, { validityHours: 24, limit: 10, messageIds: [id] }));
    }
  });
}

describe("lifecycle moves in any order", () => {
  it("keep every hold moved once and the audit clean", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(move, { minLength: 1, maxLength: 14 }), async (moves) => {
        const ids = await sendThree();
        for (const m of moves) await apply(ids, m);
        const { rows } = await t.service.pool.query<{ status: string; billing: string }>(
          "SELECT status, billing FROM messages WHERE id = ANY($1)",
          [ids],
        );
        for (const r of rows) {
          // A final message holds nothing; success is captured; a failure released.
          if (r.status === "success") expect(r.billing).toBe("captured");
          else if (r.status === "failed") expect(r.billing).toBe("released");
          else expect(r.billing).toBe("held");
        }
        const report = await audit(t.service.pool, { stuckMinutes: 60, receiptHours: 48 });
        expect(report.balance_mismatches.count).toBe(0);
        expect(report.holds_without_live_message.count).toBe(0);
        const balance = await balanceOf(t.service.pool, acct.id, new Date(0));
        const ledger = await balanceFromLedger(t.service.pool, acct.id);
        expect({ available: balance?.available, held: balance?.held }).toEqual(ledger);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
