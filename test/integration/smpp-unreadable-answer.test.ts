/**
 * A submit_sm_resp ESME_ROK whose body Shiri's codec cannot read is still the carrier's acceptance
 * (decision 0001: ESME_ROK is acceptance, whatever its id holds): its header names the submit, so
 * the segment is recorded accepted and never sent again. A message_id with no closing NUL runs to
 * the end of the PDU and is read so, as a tolerant ESME reads it, so its receipt still matches; a
 * body that does not read at all (a TLV cut short) leaves the id empty.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForeignCarrier, startForeignCarrier } from "../support/foreign-carrier.ts";
import { waitFor } from "../support/wait-for.ts";

const UNTERMINATED = "263771700001";
const CUT_TLV = "263771700003";
/** Past a response timeout (2 s), its late window (6 s) and a second try: a resend would show. */
const SETTLED_MS = 40_000;

let carrier: ForeignCarrier;
beforeAll(async () => {
  carrier = await startForeignCarrier({
    script: (destination) => {
      if (destination === UNTERMINATED)
        return { answerId: "ABC123", answerBody: Buffer.from("ABC123", "ascii") };
      if (destination === CUT_TLV)
        // A readable message_id, then three octets: a TLV's tag and half its length.
        return { answerBody: Buffer.from("XYZ789\0\x04\x27\x00", "latin1"), receipt: false };
      return undefined;
    },
  });
});
afterAll(() => carrier?.stop());

async function settled(id: string, final: (status: string, delivered: boolean) => boolean) {
  await waitFor(
    async () => {
      const state = await carrier.state(id);
      return state !== undefined && final(state.status, state.delivered);
    },
    { timeoutMs: SETTLED_MS, what: "the message settled" },
  ).catch(() => {});
  return carrier.state(id);
}

describe("a submit_sm_resp ESME_ROK whose body does not read", () => {
  it(
    "a message_id with no NUL: accepted once, its id read to the end of the PDU, its receipt matched",
    async () => {
      const id = await carrier.send(`+${UNTERMINATED}`, "accepted, id unterminated");
      const state = await settled(id, (status, delivered) => status === "failed" || delivered);
      expect(carrier.smsc.submitsPerDestination().get(`${UNTERMINATED}#1`)).toBe(1);
      expect(state).toMatchObject({ status: "success", operator_response: "DELIVRD", delivered: true });
    },
    SETTLED_MS + 20_000,
  );

  it(
    "a TLV cut short: accepted once with an empty id, not sent again",
    async () => {
      const id = await carrier.send(`+${CUT_TLV}`, "accepted, body cut short");
      const state = await settled(id, (status) => ["success", "failed"].includes(status));
      expect(carrier.smsc.submitsPerDestination().get(`${CUT_TLV}#1`)).toBe(1);
      expect(state).toMatchObject({ status: "success", operator_response: "ESME_ROK" });
    },
    SETTLED_MS + 20_000,
  );
});
