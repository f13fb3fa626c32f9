/**
 * An SMSC that sends receipts with esm_class 0 (a plain message's type) but with the
 * receipted_message_id and message_state TLVs, which only receipts carry (SMPP 3.4 5.3.2.12,
 * 5.3.2.35). Before, esm_class alone decided: the receipt was stored as a handset's message and
 * lost. A text that only looks like a receipt, esm_class 0 and no such TLVs, stays a handset's
 * message: a handset must not be able to forge a receipt.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForeignCarrier, startForeignCarrier } from "../support/foreign-carrier.ts";
import type { ScriptedSubmit } from "../support/foreign-smsc.ts";
import { waitFor } from "../support/wait-for.ts";

const TLV_RECEIPT = { to: "263771700001", id: "PLAIN-TLV-1" };
const LOOKALIKE = { to: "263771700002", id: "PLAIN-TEXT-2" };
const SCRIPT = new Map<string, ScriptedSubmit>([
  [TLV_RECEIPT.to, { answerId: TLV_RECEIPT.id, receipt: false }],
  [LOOKALIKE.to, { answerId: LOOKALIKE.id, receipt: false }],
]);

let carrier: ForeignCarrier;
beforeAll(async () => {
  carrier = await startForeignCarrier({ script: (destination) => SCRIPT.get(destination) });
});
afterAll(() => carrier?.stop());

const state = (id: string) => carrier.state(id);

async function sendAccepted(to: string): Promise<string> {
  const id = await carrier.send(`+${to}`, "receipt or not");
  await waitFor(async () => (await state(id))?.status === "success", { what: "the message accepted" });
  return id;
}

const storedFrom = async (handset: string) =>
  (
    await carrier.t.service.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM mobile_originated WHERE source_addr = $1",
      [handset],
    )
  ).rows[0]?.n;

describe("a deliver_sm with esm_class 0", () => {
  it("is a receipt when it carries receipted_message_id and message_state", async () => {
    const id = await sendAccepted(TLV_RECEIPT.to);
    const status = await carrier.smsc.sendReceipt({
      id: TLV_RECEIPT.id,
      stat: "DELIVRD",
      handset: TLV_RECEIPT.to,
      esmClass: 0,
      tlvs: true,
    });
    expect(status).toBe(0);
    await waitFor(async () => (await state(id))?.delivered === true, {
      timeoutMs: 10_000,
      what: "the message delivered",
    });
    expect(await storedFrom(TLV_RECEIPT.to)).toBe(0);
  });

  it("is a handset's message when only its text looks like a receipt", async () => {
    const id = await sendAccepted(LOOKALIKE.to);
    const status = await carrier.smsc.sendReceipt({
      id: LOOKALIKE.id,
      stat: "DELIVRD",
      handset: LOOKALIKE.to,
      esmClass: 0,
    });
    expect(status).toBe(0);
    // Stored once acknowledged: the deliver_sm_resp came after it was written.
    expect(await storedFrom(LOOKALIKE.to)).toBe(1);
    expect(await state(id)).toMatchObject({ status: "success", delivered: false });
  });
});
