import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openMark, sampleOpenMessages } from "../../src/lifecycle/open-mark.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * GET /api/v1/balance reads held money from the messages due since the open-messages watermark,
 * not from every message of the account: what is held must still be all of it, a send not yet
 * dispatched and a send scheduled for tomorrow alike, once the watermark has moved past the
 * account's older, final messages.
 */
let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account({ balance: 1_000_000 });
});
afterAll(() => t?.stop());

const balance = async () => {
  const res = await call(t.base, "GET", "/api/v1/balance", { headers: acct.headers });
  expect(res.status).toBe(200);
  return (res.body as { data: { available: string; held: string } }).data;
};

describe("the balance's held money", () => {
  it("is every held charge, scheduled ones included, with the watermark moved past older messages", async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const sends = [
      { to: "+263771000001", from: "SHIRI", message: "now" },
      { to: "+263771000002", from: "SHIRI", message: "tomorrow", send_at: tomorrow },
    ];
    const charges: number[] = [];
    for (const body of sends) {
      const res = await call(t.base, "POST", "/api/v1/sms", { headers: acct.headers, body });
      expect(res.status, res.text).toBe(202);
      charges.push(Number((res.body as { charge: string }).charge));
    }
    // An older message, final and captured, that the watermark has left behind.
    await t.service.pool.query(
      `UPDATE messages SET status = 'failed', billing = 'released', received_at = now() - interval '1 day'
        WHERE id = (SELECT id FROM messages WHERE account_id = $1 AND body = 'now')`,
      [acct.id],
    );
    await t.service.pool.query(
      `INSERT INTO messages (id, account_id, "to", body, sender_id, operator, encoding, segments, charge,
                             charge_currency, status, billing, received_at, created_at)
       VALUES (gen_random_uuid(), $1, '+263771000003', 'still now', 'SHIRI', 'econet', 'gsm7', 1, 450,
               'USD', 'enqueued', 'held', now(), now())`,
      [acct.id],
    );
    await sampleOpenMessages(t.service.pool);
    expect((await openMark(t.service.pool)).getTime()).toBeGreaterThan(Date.now() - 3_600_000);
    // The scheduled send and the open one: the final one is released, not held.
    expect(Number((await balance()).held)).toBe((charges[1] as number) + 450);
  });
});
