/**
 * An SMSC whose counter restarted gives a new submit an id it used before, and sends that
 * submit's receipt before its submit_sm_resp. Before, the receipt, held by no batch yet, went
 * straight to the database and matched the old segment with that id: a false DELIVRD there (or a
 * duplicate, lost, when the old message was final already), and the new message never delivered.
 * Now a receipt no batch holds waits while submits written before it are unanswered, and is
 * offered to the batches again once they are answered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForeignCarrier, startForeignCarrier } from "../support/foreign-carrier.ts";
import type { ScriptedSubmit } from "../support/foreign-smsc.ts";
import { waitFor } from "../support/wait-for.ts";

/** What the SMSC does with each destination's submits. */
const SCRIPT = new Map<string, ScriptedSubmit>([
  // Accepted with an id, its receipt never sent: the old message stays without a receipt.
  ["263771600001", { answerId: "REUSED-7", receipt: false }],
  // The same id again, its receipt sent 300 ms before the answer.
  ["263771600002", { answerId: "REUSED-7", answerAfterReceiptMs: 300 }],
  // Accepted and receipted as usual: the old message is delivered, final.
  ["263771600003", { answerId: "REUSED-8" }],
  ["263771600004", { answerId: "REUSED-8", answerAfterReceiptMs: 300 }],
]);

let carrier: ForeignCarrier;
beforeAll(async () => {
  carrier = await startForeignCarrier({ script: (destination) => SCRIPT.get(destination) });
});
afterAll(() => carrier?.stop());

const send = (to: string) => carrier.send(`+${to}`, "an id used before");
const state = (id: string) => carrier.state(id);

describe("a receipt that comes before its submit_sm_resp, for an id used before", () => {
  it("is applied to the new message, not to the old one with that id", async () => {
    const old = await send("263771600001");
    await waitFor(async () => (await state(old))?.status === "success", { what: "the old message accepted" });
    const fresh = await send("263771600002");
    await waitFor(async () => (await state(fresh))?.delivered === true, {
      timeoutMs: 10_000,
      what: "the new message delivered",
    });
    expect(await state(old)).toMatchObject({ status: "success", delivered: false });
  });

  it("is not lost as a duplicate when the old message was final already", async () => {
    const old = await send("263771600003");
    await waitFor(async () => (await state(old))?.delivered === true, { what: "the old message delivered" });
    const fresh = await send("263771600004");
    await waitFor(async () => (await state(fresh))?.delivered === true, {
      timeoutMs: 10_000,
      what: "the new message delivered",
    });
  });
});
