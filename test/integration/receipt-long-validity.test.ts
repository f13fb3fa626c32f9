/**
 * A send may ask for a validity_period of up to three days, and the SMSC is told so: it keeps
 * trying a handset that is off for that long. The receipt that finally comes must still find its
 * segment, so receipts are matched to segments accepted within the longest validity a message on
 * the link can have, not only MESSAGE_VALIDITY_HOURS (24 by default).
 */
import { afterEach, describe, expect, it } from "vitest";
import { smppEnv } from "../support/dispatch.ts";
import { startForeignSmsc } from "../support/foreign-smsc.ts";
import { call, startTestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

describe("a receipt for a message sent with a 3-day validity_period", () => {
  it("delivers it when the handset took it 30 hours later", async () => {
    const smsc = startForeignSmsc({
      ids: { answer: "base36", receipt: "base36" },
      script: () => ({ receipt: false }),
    });
    const port = await smsc.start();
    stops.push(() => smsc.stop());
    const t = await startTestService(smppEnv({ econet: port }), "all");
    stops.push(() => t.stop());
    const acct = await t.account({ balance: 1_000_000_000 });
    const res = await call(t.base, "POST", "/api/v1/sms", {
      headers: acct.headers,
      body: { to: "+263771000001", from: "SHIRI", message: "Mhoro", validity_period: 259_200 },
    });
    expect(res.status).toBe(202);
    const id = (res.body as { id: string }).id;
    const row = async () =>
      (
        await t.service.pool.query<{ status: string; delivered: boolean }>(
          "SELECT status, delivered_at IS NOT NULL AS delivered FROM messages WHERE id = $1",
          [id],
        )
      ).rows[0];
    await waitFor(async () => (await row())?.status === "success", { what: "the message accepted" });
    // 30 hours pass: the handset is off, and the SMSC keeps trying within the 3 days it was given.
    await t.service.pool.query(
      `UPDATE message_parts SET accepted_at = accepted_at - interval '30 hours',
              sent_after = sent_after - interval '30 hours' WHERE message_id = $1`,
      [id],
    );
    const receiptId = smsc.submits[0]?.receiptId as string;
    expect(await smsc.sendReceipt({ id: receiptId, stat: "DELIVRD", handset: "263771000001" })).toBe(0);
    expect(await row()).toEqual({ status: "success", delivered: true });
    const kept = await t.service.pool.query("SELECT smsc_id FROM early_receipts");
    expect(kept.rows).toEqual([]);
  }, 60_000);
});
