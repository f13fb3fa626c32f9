/**
 * The CPU one message costs in the SMPP codec: its submit_sm written, the submit_sm_resp read,
 * its receipt's deliver_sm read as Shiri reads it, and the deliver_sm_resp written. Shiri's codec
 * (src/smpp/pdu-codec.ts) against node-smpp's generic one, on the same bytes; the figures are in
 * docs/decisions/0008-smpp-codec.md.
 *   node --import tsx bench/codec.ts [messages per round, default 50000]
 * Prints ns/message, the best of ten rounds of each (a busy machine only ever adds time).
 */
import smpp from "smpp";
import { toDeliverSm } from "../src/smpp/deliver-sm.ts";
import { responseTo } from "../src/smpp/pdu.ts";
import { decodePdu, encodePdu } from "../src/smpp/pdu-codec.ts";
import { submitSm } from "../src/smpp/submit-sm.ts";
// The same one-segment GSM submit the codec's differential test uses.
import { SUBMIT_FIELDS } from "../test/support/pdus.ts";

const messages = Number(process.argv[2] ?? 50_000);
const ROUNDS = 10;

const submitResp = new smpp.PDU("submit_sm_resp", { message_id: "499602d2", sequence_number: 1 }).toBuffer();
const receipt = new smpp.PDU("deliver_sm", {
  source_addr_ton: 1,
  source_addr_npi: 1,
  source_addr: "263771234567",
  dest_addr_ton: 5,
  destination_addr: "SHIRI",
  esm_class: 0x04,
  data_coding: 0,
  short_message:
    "id:499602d2 sub:001 dlvrd:001 submit date:2611251412 done date:2611251413 stat:DELIVRD err:000 text:Mhoro",
  receipted_message_id: "499602d2",
  message_state: 2,
  sequence_number: 77,
}).toBuffer();

/** Something of every result is kept, so that no step can be optimised away. */
let sink = 0;

function shiri(sequence: number): void {
  sink += encodePdu({ ...submitSm(SUBMIT_FIELDS), sequence_number: sequence }).length;
  sink += decodePdu(submitResp).sequence_number;
  const deliver = decodePdu(receipt);
  sink += toDeliverSm(deliver).short_message.length;
  sink += encodePdu(responseTo(deliver)).length;
}

function nodeSmpp(sequence: number): void {
  const { udh: _, ...fields } = SUBMIT_FIELDS;
  sink += new smpp.PDU("submit_sm", { ...fields, sequence_number: sequence }).toBuffer().length;
  sink += new smpp.PDU(submitResp).sequence_number;
  const deliver = new smpp.PDU(receipt);
  const sm: unknown = deliver.short_message;
  sink += typeof sm === "object" && sm !== null && "message" in sm ? String(sm.message).length : 0;
  sink += deliver.response().toBuffer().length;
}

/** Time of one round, in ns a message. */
function round(run: (sequence: number) => void): number {
  const start = process.hrtime.bigint();
  for (let i = 1; i <= messages; i++) run(i);
  return Number(process.hrtime.bigint() - start) / messages;
}

// Warm both up, then alternate their rounds, so a burst of load from elsewhere hits both alike.
for (let warm = 0; warm < 3; warm++) {
  round(shiri);
  round(nodeSmpp);
}
let ours = Number.POSITIVE_INFINITY;
let theirs = Number.POSITIVE_INFINITY;
for (let r = 0; r < ROUNDS; r++) {
  ours = Math.min(ours, round(shiri));
  theirs = Math.min(theirs, round(nodeSmpp));
}
console.log(`shiri codec: ${ours.toFixed(0)} ns/message`);
console.log(`node-smpp:   ${theirs.toFixed(0)} ns/message (${(theirs / ours).toFixed(1)}x)`);
if (sink === 0) console.log("(nothing measured)");
