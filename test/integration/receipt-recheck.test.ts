import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.ts";
import type { Delivery } from "../../src/lifecycle/index.ts";
import { recheckLater } from "../../src/receipts/receipt-stage.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A receipt applied while its message's settle is still open cannot deliver it, and the settle's
 * own look at delivery may have run before the receipt committed. The receipt's stage looks again
 * later: if the settle commits after that first look (a big batch on a busy database), it must
 * look again, not leave a message every segment of which says DELIVRD undelivered for good.
 */
let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
});
afterAll(() => t?.stop());

describe("a receipt that met its message before its settle committed", () => {
  it("delivers the message once a settle slower than the first look has committed", async () => {
    const sent = await call(t.base, "POST", "/api/v1/sms", {
      headers: acct.headers,
      body: { to: "+263771234567", from: "SHIRI", message: "slow settle" },
    });
    expect(sent.status).toBe(202);
    const id = (sent.body as { id: string }).id;
    // The batch holds the message; the receipt applied to its recorded segment has committed.
    await t.service.pool.query("UPDATE messages SET status = 'processing' WHERE id = $1", [id]);
    await t.service.pool.query(
      `INSERT INTO message_parts (message_id, part_no, link, smsc_id, receipt_state, receipt_at)
       VALUES ($1, 1, 'econet', 'slow-1', 'DELIVRD', now())`,
      [id],
    );
    const delivered: Delivery[] = [];
    recheckLater(
      (fn) => withTransaction(t.service.pool, fn),
      [id],
      (d) => delivered.push(...d),
    );
    // The settle commits after the first look (1 s), without having seen the receipt.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await t.service.pool.query(
      "UPDATE messages SET status = 'success', accepted_at = now(), operator_response = 'ESME_ROK' WHERE id = $1",
      [id],
    );
    await waitFor(async () => delivered.length === 1, { timeoutMs: 10_000, what: "the message delivered" });
    const message = await call(t.base, "GET", `/api/v1/sms/${id}`, { headers: acct.headers });
    const data = (
      message.body as { data: { status: string; operator_response: string; delivered_at: string | null } }
    ).data;
    expect([data.status, data.operator_response]).toEqual(["success", "DELIVRD"]);
    expect(data.delivered_at).not.toBeNull();
  }, 30_000);
});
