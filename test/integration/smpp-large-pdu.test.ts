/**
 * A well-formed deliver_sm far over node-smpp's 16,384 octets (SMPP 3.4 sets no PDU size limit,
 * and message_payload may hold 65,535 octets) is read and handled like any other: the
 * mobile-originated message is stored, the connection stays up, and the submit_sm_resp ESME_ROK
 * right behind it in the stream is read, so its segment is submitted once. Refused as a framing
 * error, the connection would drop with the answer unread, the segment would go again after the
 * rebind, and an SMSC redelivering the deliver_sm would drop every bind.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForeignCarrier, startForeignCarrier } from "../support/foreign-carrier.ts";
import { payloadMoBytes } from "../support/pdus.ts";
import { waitFor } from "../support/wait-for.ts";

const DEST = "263771700002";
const MO_SOURCE = "263771799999";
/** The most a TLV can hold. */
const PAYLOAD_OCTETS = 65_535;

let carrier: ForeignCarrier;
let submitsSeen = 0;
beforeAll(async () => {
  carrier = await startForeignCarrier({
    script: (destination) => {
      if (destination !== DEST) return undefined;
      submitsSeen++;
      // Ahead of the answer on the first two submits, as an SMSC redelivering it after a rebind would.
      return submitsSeen <= 2
        ? { beforeAnswer: payloadMoBytes(9000 + submitsSeen, MO_SOURCE, PAYLOAD_OCTETS) }
        : {};
    },
  });
});
afterAll(() => carrier?.stop());

describe("a deliver_sm of 65,535 octets of message_payload", () => {
  it("is stored, and the ESME_ROK behind it read: the segment is submitted once", async () => {
    const id = await carrier.send(`+${DEST}`, "one message, accepted at once");
    await waitFor(async () => ["success", "failed"].includes((await carrier.state(id))?.status ?? ""), {
      timeoutMs: 30_000,
      what: "the message settled",
    }).catch(() => {});
    expect(carrier.smsc.submitsPerDestination().get(`${DEST}#1`)).toBe(1);
    expect((await carrier.state(id))?.status).toBe("success");
    const stored = async () =>
      (
        await carrier.t.service.pool.query<{ length: number }>(
          "SELECT length(body) AS length FROM mobile_originated WHERE source_addr LIKE $1",
          [`%${MO_SOURCE}`],
        )
      ).rows.map((r) => r.length);
    await waitFor(async () => (await stored()).length > 0, { timeoutMs: 5_000, what: "the MO stored" }).catch(
      () => {},
    );
    expect(await stored()).toEqual([PAYLOAD_OCTETS]);
  }, 40_000);
});
