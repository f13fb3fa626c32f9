/**
 * An SMSC that sends receipts with esm_class 0 (a plain message's type) but with the
 * receipted_message_id and message_state TLVs, which only receipts carry (SMPP 3.4 5.3.2.12,
 * 5.3.2.35). Before, esm_class alone decided: the receipt was stored as a handset's message and
 * lost. A text that only looks like a receipt, esm_class 0 and no such TLVs, stays a handset's
 * message: a handset must not be able to forge a receipt.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { smppEnv } from "../support/dispatch.ts";
import { type ForeignSmsc, type ScriptedSubmit, startForeignSmsc } from "../support/foreign-smsc.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

const TLV_RECEIPT = { to: "263771700001", id: "PLAIN-TLV-1" };
const LOOKALIKE = { to: "263771700002", id: "PLAIN-TEXT-2" };
const SCRIPT = new Map<string, ScriptedSubmit>([
  [TLV_RECEIPT.to, { answerId: TLV_RECEIPT.id, receipt: false }],
  [LOOKALIKE.to, { answerId: LOOKALIKE.id, receipt: false }],
]);

let smsc: ForeignSmsc;
let t: TestService;
let acct: TestAccount;
beforeAll(async () => {
  smsc = startForeignSmsc({ script: (destination) => SCRIPT.get(destination) });
  const port = await smsc.start();
  t = await startTestService(smppEnv({ econet: port }), "all");
  acct = await t.account({ balance: 1_000_000_000 });
});
afterAll(async () => {
  await t?.stop();
  await smsc?.stop();
});

async function sendAccepted(to: string): Promise<string> {
  const res = await call(t.base, "POST", "/api/v1/sms", {
    headers: acct.headers,
    body: { to: `+${to}`, from: "SHIRI", message: "receipt or not" },
  });
  expect(res.status).toBe(202);
  const id = (res.body as { id: string }).id;
  await waitFor(async () => (await state(id))?.status === "success", { what: "the message accepted" });
  return id;
}

const state = async (id: string) =>
  (
    await t.service.pool.query<{ status: string; delivered: boolean }>(
      "SELECT status, delivered_at IS NOT NULL AS delivered FROM messages WHERE id = $1",
      [id],
    )
  ).rows[0];

const storedFrom = async (handset: string) =>
  (
    await t.service.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM mobile_originated WHERE source_addr = $1",
      [handset],
    )
  ).rows[0]?.n;

describe("a deliver_sm with esm_class 0", () => {
  it("is a receipt when it carries receipted_message_id and message_state", async () => {
    const id = await sendAccepted(TLV_RECEIPT.to);
    const status = await smsc.sendReceipt({
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
    const status = await smsc.sendReceipt({
      id: LOOKALIKE.id,
      stat: "DELIVRD",
      handset: LOOKALIKE.to,
      esmClass: 0,
    });
    expect(status).toBe(0);
    // Stored once acknowledged: the deliver_sm_resp came after it was written.
    expect(await storedFrom(LOOKALIKE.to)).toBe(1);
    expect(await state(id)).toEqual({ status: "success", delivered: false });
  });
});
