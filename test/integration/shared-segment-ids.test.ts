/**
 * An SMSC that gives every segment of a long message the same id, and sends a receipt per segment
 * (RECEIPT_SCOPE=segment, the default). Before, each receipt matched only the most recent segment
 * with that id, so the first segment never had one and the message was never delivered. Segments
 * of one message that share an id cannot be told apart: a receipt for that id stands for them all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { smppEnv } from "../support/dispatch.ts";
import { type ForeignSmsc, startForeignSmsc } from "../support/foreign-smsc.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

const LONG = `Your parcel is on its way. ${"Track it with the link we sent you earlier today. ".repeat(4)}`;
const SHARED = { to: "+263771500001", id: "SHARED-0001" };
const OTHER = { to: "+263771500002", id: "SHARED-0002" };

let smsc: ForeignSmsc;
let t: TestService;
let acct: TestAccount;
beforeAll(async () => {
  // The test sends the receipts itself, once the message is recorded as accepted.
  smsc = startForeignSmsc({
    script: (destination) =>
      destination === SHARED.to.slice(1)
        ? { answerId: SHARED.id, receipt: false }
        : destination === OTHER.to.slice(1)
          ? { answerId: OTHER.id, receipt: false }
          : undefined,
  });
  const port = await smsc.start();
  t = await startTestService(smppEnv({ econet: port }), "all");
  acct = await t.account({ balance: 1_000_000_000 });
});
afterAll(async () => {
  await t?.stop();
  await smsc?.stop();
});

async function sendLong(to: string): Promise<string> {
  const res = await call(t.base, "POST", "/api/v1/sms", {
    headers: acct.headers,
    body: { to, from: "SHIRI", message: LONG },
  });
  expect(res.status).toBe(202);
  return (res.body as { id: string }).id;
}

const state = async (id: string) =>
  (
    await t.service.pool.query<{ status: string; operator_response: string; delivered: boolean }>(
      "SELECT status, operator_response, delivered_at IS NOT NULL AS delivered FROM messages WHERE id = $1",
      [id],
    )
  ).rows[0];

const partStates = async (id: string) =>
  (
    await t.service.pool.query<{ part_no: number; receipt_state: string | null }>(
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
      expect(await smsc.sendReceipt({ id: SHARED.id, stat: "DELIVRD", handset: SHARED.to.slice(1) })).toBe(0);
    await waitFor(async () => (await state(id))?.delivered === true, {
      timeoutMs: 10_000,
      what: "the message delivered",
    });
    expect((await partStates(id)).map((p) => p.receipt_state)).toEqual(parts.map(() => "DELIVRD"));
  });

  it("are not delivered by one that says otherwise", async () => {
    const id = await sendLong(OTHER.to);
    await waitFor(async () => (await state(id))?.status === "success", { what: "the message accepted" });
    expect(await smsc.sendReceipt({ id: OTHER.id, stat: "UNDELIV", handset: OTHER.to.slice(1) })).toBe(0);
    await waitFor(async () => (await state(id))?.operator_response.startsWith("UNDELIV") === true, {
      timeoutMs: 10_000,
      what: "the message's final state",
    });
    expect(await state(id)).toMatchObject({ status: "success", delivered: false });
    expect((await partStates(id)).every((p) => p.receipt_state === "UNDELIV")).toBe(true);
  });
});
