/**
 * Shiri's direct path for the PDUs of every message (src/smpp/pdu-codec.ts) against node-smpp's
 * own codec: the same bytes for every submit_sm Shiri writes, the same message for every
 * deliver_sm and submit_sm_resp it reads, whichever path a PDU takes.
 */
import smpp, { type PDU, type PduOptions } from "smpp";
import { describe, expect, it } from "vitest";
import {
  decodePdu,
  encodePdu,
  encodeSubmitSm,
  type SubmitSmFields,
  validityPeriod,
} from "../../src/smpp/pdu-codec.ts";
import { toDeliverSm } from "../../src/smpp/session.ts";
import { deliverSmBytes, receiptText, SUBMIT_FIELDS } from "../support/pdus.ts";

/** The same submit as node-smpp's options, the way session.ts built them before. */
function asNodeSmppOptions(fields: SubmitSmFields, validity?: string | Date): PduOptions {
  const { udh, short_message, validity_period, ...rest } = fields;
  return {
    ...rest,
    short_message: udh ? { udh, message: short_message } : short_message,
    ...(validity !== undefined ? { validity_period: validity } : {}),
  };
}

const UDH = Buffer.from([0x05, 0x00, 0x03, 0x2a, 0x02, 0x01]);
describe("encodeSubmitSm", () => {
  const cases: Array<[string, SubmitSmFields, (string | Date)?]> = [
    ["a plain GSM submit", SUBMIT_FIELDS, undefined],
    [
      "a numeric sender",
      { ...SUBMIT_FIELDS, source_addr_ton: 1, source_addr_npi: 1, source_addr: "263771000000" },
    ],
    [
      "UCS-2, no receipt",
      { ...SUBMIT_FIELDS, data_coding: 8, registered_delivery: 0, short_message: Buffer.alloc(140, 0x41) },
    ],
    ["an empty message", { ...SUBMIT_FIELDS, short_message: Buffer.alloc(0) }],
    ["a UDH segment", { ...SUBMIT_FIELDS, udh: UDH, short_message: Buffer.alloc(153, 0x61) }],
    ["an empty UDH", { ...SUBMIT_FIELDS, udh: Buffer.alloc(0) }],
    [
      "a SAR segment",
      {
        ...SUBMIT_FIELDS,
        sar_msg_ref_num: 0xbeef,
        sar_total_segments: 3,
        sar_segment_seqnum: 2,
        short_message: Buffer.alloc(153, 0x62),
      },
    ],
    [
      "a relative validity",
      { ...SUBMIT_FIELDS, validity_period: validityPeriod(93_784) },
      "000001020304000R",
    ],
    [
      "an absolute validity",
      { ...SUBMIT_FIELDS, validity_period: validityPeriod(new Date(Date.UTC(2026, 10, 25, 9, 8, 7, 654))) },
      new Date(Date.UTC(2026, 10, 25, 9, 8, 7, 654)),
    ],
    ["a sender with a non-ASCII character", { ...SUBMIT_FIELDS, source_addr: "Shirí" }],
  ];
  for (const [name, fields, validity] of cases) {
    it(`writes node-smpp's bytes: ${name}`, () => {
      const theirs = new smpp.PDU("submit_sm", {
        ...asNodeSmppOptions(fields, validity),
        sequence_number: 0x1234,
      }).toBuffer();
      expect(encodeSubmitSm(fields, 0x1234).toString("hex")).toBe(theirs.toString("hex"));
    });
  }

  it("refuses user data over 255 octets, as node-smpp does", () => {
    const fields = { ...SUBMIT_FIELDS, udh: UDH, short_message: Buffer.alloc(250) };
    expect(() => new smpp.PDU("submit_sm", asNodeSmppOptions(fields)).toBuffer()).toThrow();
    expect(() => encodeSubmitSm(fields, 1)).toThrow(RangeError);
  });
});

const RECEIPT_TEXT = receiptText(1234567890);

/** What Shiri reads of a PDU, and how it answers it. */
function readBoth(bytes: Buffer): { ours: PDU; theirs: PDU } {
  return { ours: decodePdu(bytes), theirs: new smpp.PDU(bytes) };
}

/** A deliver_sm as Shiri reads it, but for the raw user data node-smpp does not keep. */
function readWithoutUserData(pdu: PDU) {
  const { user_data: _, ...rest } = toDeliverSm(pdu);
  return rest;
}

describe("decodePdu: deliver_sm", () => {
  const cases: Array<[string, PduOptions]> = [
    [
      "a receipt with every TLV Shiri reads",
      {
        short_message: RECEIPT_TEXT,
        receipted_message_id: "499602d2",
        message_state: 2,
        network_error_code: Buffer.from([0x03, 0x00, 0x01]),
        user_message_reference: 0x0102,
      },
    ],
    ["a receipt with no TLV", { short_message: RECEIPT_TEXT }],
    ["an intermediate notification", { esm_class: 0x20, short_message: RECEIPT_TEXT, message_state: 1 }],
    ["data_coding 0xF0", { data_coding: 0xf0, short_message: Buffer.from(RECEIPT_TEXT, "latin1") }],
    [
      "every octet in the default alphabet",
      { short_message: Buffer.from(Array.from({ length: 255 }, (_, i) => i)) },
    ],
    [
      "escapes of the extension table",
      {
        short_message: Buffer.from([0x1b, 0x14, 0x1b, 0x28, 0x1b, 0x29, 0x1b, 0x65, 0x1b, 0x1b, 0x3c, 0x1b]),
      },
    ],
    ["an empty short_message", { short_message: Buffer.alloc(0) }],
    ["a mobile-originated message", { esm_class: 0, short_message: "Mhoro Shiri" }],
    // The ones left to node-smpp:
    ["a UDH", { esm_class: 0x40, short_message: { udh: UDH, message: Buffer.from("part one") } }],
    ["UCS-2", { data_coding: 8, short_message: Buffer.from("00480069", "hex") }],
    ["Latin-1", { data_coding: 3, short_message: Buffer.from("café", "latin1") }],
    ["message_payload", { short_message: Buffer.alloc(0), message_payload: Buffer.from(RECEIPT_TEXT) }],
    ["an unknown TLV", { short_message: RECEIPT_TEXT, more_messages_to_send: 1 }],
    ["a validity period", { short_message: RECEIPT_TEXT, validity_period: "000001000000000R" }],
  ];
  for (const [name, options] of cases) {
    it(`reads what node-smpp reads: ${name}`, () => {
      const { ours, theirs } = readBoth(deliverSmBytes(options));
      expect(ours.command).toBe("deliver_sm");
      expect(ours.sequence_number).toBe(77);
      expect(ours.isResponse()).toBe(false);
      expect(readWithoutUserData(ours)).toEqual(readWithoutUserData(theirs));
      for (const status of [0, 0x64]) {
        const answer = ours.response({ command_status: status });
        expect(encodePdu(answer).toString("hex")).toBe(
          theirs.response({ command_status: status }).toBuffer().toString("hex"),
        );
      }
    });
  }

  it("reads a truncated deliver_sm as node-smpp does", () => {
    const whole = deliverSmBytes({ short_message: RECEIPT_TEXT });
    const cut = Buffer.from(whole.subarray(0, 40));
    cut.writeUInt32BE(cut.length, 0);
    const { ours, theirs } = readBoth(cut);
    expect(readWithoutUserData(ours)).toEqual(readWithoutUserData(theirs));
  });

  it("keeps a message's user data as octets, after its UDH, and none for a receipt", () => {
    const text = Buffer.from([0x00, 0x53, 0xd8, 0x3d]);
    const udh = toDeliverSm(
      decodePdu(
        deliverSmBytes({ esm_class: 0x40, data_coding: 8, short_message: { udh: UDH, message: text } }),
      ),
    );
    expect(udh.user_data?.toString("hex")).toBe(text.toString("hex"));
    expect(udh.udh).toEqual([UDH.subarray(1)]);
    expect(udh.isReceipt).toBe(false);
    const ia5 = toDeliverSm(
      decodePdu(deliverSmBytes({ esm_class: 0, data_coding: 1, short_message: Buffer.from("a@_$") })),
    );
    expect(ia5.user_data?.toString("latin1")).toBe("a@_$");
    const payload = toDeliverSm(
      decodePdu(
        deliverSmBytes({
          esm_class: 0,
          short_message: Buffer.alloc(0),
          message_payload: Buffer.from("long"),
        }),
      ),
    );
    expect(payload.user_data?.toString("latin1")).toBe("long");
    const sar = toDeliverSm(
      decodePdu(
        deliverSmBytes({
          esm_class: 0,
          short_message: Buffer.from("p2"),
          sar_msg_ref_num: 0x1234,
          sar_total_segments: 3,
          sar_segment_seqnum: 2,
        }),
      ),
    );
    expect(sar.tlvs).toMatchObject({ sar_msg_ref_num: 0x1234, sar_total_segments: 3, sar_segment_seqnum: 2 });
    expect(toDeliverSm(decodePdu(deliverSmBytes({ short_message: RECEIPT_TEXT }))).user_data).toBeUndefined();
  });
});

describe("decodePdu: submit_sm_resp and the rest", () => {
  it("reads a submit_sm_resp's message_id and status", () => {
    for (const [status, id] of [
      [0, "499602d2"],
      [0, ""],
      [0x58, ""],
    ] as const) {
      const bytes = new smpp.PDU("submit_sm_resp", {
        command_status: status,
        message_id: id,
        sequence_number: 9,
      }).toBuffer();
      const { ours, theirs } = readBoth(bytes);
      for (const field of ["command", "command_id", "command_status", "sequence_number", "message_id"])
        expect(ours[field]).toEqual(theirs[field]);
      expect(ours.isResponse()).toBe(true);
    }
  });

  it("leaves other PDUs to node-smpp", () => {
    const bytes = new smpp.PDU("enquire_link", { sequence_number: 5 }).toBuffer();
    const pdu = decodePdu(bytes);
    expect(pdu.command).toBe("enquire_link");
    expect(encodePdu(pdu.response()).toString("hex")).toBe(
      new smpp.PDU("enquire_link_resp", { sequence_number: 5 }).toBuffer().toString("hex"),
    );
  });
});
