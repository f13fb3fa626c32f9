/**
 * An SMSC that gives every segment of a long message the same id, and sends a receipt per segment
 * (RECEIPT_SCOPE=segment, the default). Before, each receipt matched only the most recent segment
 * with that id, so the first segment never had one and the message was never delivered. Segments
 * of one message that share an id cannot be told apart: a receipt for that id stands for them all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForeignCarrier, startForeignCarrier } from "../support/foreign-carrier.ts";
import { waitFor } from "../support/wait-for.ts";

const LONG = `Your parcel is on its way. ${"Track it with the link we sent you earlier today. ".repeat(4)}`;
const SHARED = { to: "+263771500001", id: "SHARED-0001" };
const OTHER = { to: "+263771500002", id: "SHARED-0002" };

let carrier: ForeignCarrier;
beforeAll(async () => {
  // The test sends the receipts itself, once the message is recorded as accepted.
  carrier = await startForeignCarrier({
    script: (destination) =>
      destination === SHARED.to.slice(1)
        ? { answerId: SHARED.id, receipt: false }
        : destination === OTHER.to.slice(1)
          ? { answerId: OTHER.id, receipt: false }
          : undefined,
  });
});
afterAll(() => carrier?.stop());

const sendLong = (to: string) => carrier.send(to, LONG);
const state = (id: string) => carrier.state(id);

const partStates = async (id: string) =>
  (
    await carrier.t.service.pool.query<{ part_no: number; receipt_state: string | null }>(
      "SELECT part_no, receipt_state FROM message_parts WHERE message_id = $1 ORDER BY part_no",
      [id],
    )
  ).rows;

describe("segments of one message that share an id", () => {
  it("are delivered by the receipts for that id", async () => {
    const id = await sendLong(SHARED.to);
    await waitFor(async () => (await state(id))?.status === "success", { what: "the message accepted" });
    const parts = await partStates(id);
    expect(parts.length).toBeGreaterThan(1);
    // One receipt per segment, as the SMSC sends them.
    for (const _ of parts)
      expect(
        await carrier.smsc.sendReceipt({ id: SHARED.id, stat: "DELIVRD", handset: SHARED.to.slice(1) }),
      ).toBe(0);
    await waitFor(async () => (await state(id))?.delivered === true, {
      timeoutMs: 10_000,
      what: "the message delivered",
    });
    expect((await partStates(id)).map((p) => p.receipt_state)).toEqual(parts.map(() => "DELIVRD"));
  });

  it("are not delivered by one that says otherwise", async () => {
    const id = await sendLong(OTHER.to);
    await waitFor(async () => (await state(id))?.status === "success", { what: "the message accepted" });
    expect(
      await carrier.smsc.sendReceipt({ id: OTHER.id, stat: "UNDELIV", handset: OTHER.to.slice(1) }),
    ).toBe(0);
    await waitFor(async () => (await state(id))?.operator_response.startsWith("UNDELIV") === true, {
      timeoutMs: 10_000,
      what: "the message's final state",
    });
    expect(await state(id)).toMatchObject({ status: "success", delivered: false });
    expect((await partStates(id)).every((p) => p.receipt_state === "UNDELIV")).toBe(true);
  });
});
