/**
 * Shiri's codec (src/smpp/pdu-codec.ts, by the tables of pdu.ts) against node-smpp's, the
 * reference it replaced: the same bytes for every PDU Shiri writes; every PDU node-smpp writes
 * decodes to the fields node-smpp reads and encodes back to the very same bytes; a deliver_sm
 * reads as Shiri read it through node-smpp. Where the text of a receipt deliberately differs
 * (docs/decisions/0008-smpp-codec.md) the difference is pinned here too.
 */
import fc from "fast-check";
import smpp, { type PDU, type PduOptions } from "smpp";
import { describe, expect, it } from "vitest";
import { type DeliverSm, toDeliverSm } from "../../src/smpp/deliver-sm.ts";
import {
  COMMANDS,
  isResponse,
  type Pdu,
  request,
  responseTo,
  stringField,
  tlvValue,
} from "../../src/smpp/pdu.ts";
import { decodePdu, encodePdu, PduBodyError } from "../../src/smpp/pdu-codec.ts";
import { type SubmitSmFields, submitSm, validityPeriod } from "../../src/smpp/submit-sm.ts";
import { deliverSmBytes, receiptText, SUBMIT_FIELDS } from "../support/pdus.ts";

const hex = (bytes: Buffer) => bytes.toString("hex");
const theirBytes = (command: string, options: PduOptions) => new smpp.PDU(command, options).toBuffer();
const ours = (pdu: Pdu, sequence_number: number) => encodePdu({ ...pdu, sequence_number });

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

describe("encodePdu: what Shiri writes", () => {
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
    ["a maximal message", { ...SUBMIT_FIELDS, data_coding: 4, short_message: Buffer.alloc(255, 0xff) }],
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
    it(`writes node-smpp's bytes for a submit_sm: ${name}`, () => {
      const theirs = theirBytes("submit_sm", {
        ...asNodeSmppOptions(fields, validity),
        sequence_number: 0x1234,
      });
      expect(hex(ours(submitSm(fields), 0x1234))).toBe(hex(theirs));
    });
  }

  it("writes node-smpp's bytes for any submit_sm Shiri may fill", () => {
    const address = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map(String.fromCharCode),
      maxLength: 20,
    });
    const octet = fc.integer({ min: 0, max: 255 });
    const submit = fc
      .record({
        source_addr_ton: octet,
        source_addr_npi: octet,
        source_addr: address,
        dest_addr_ton: octet,
        dest_addr_npi: octet,
        destination_addr: address,
        registered_delivery: octet,
        data_coding: octet,
        short_message: fc.uint8Array({ maxLength: 140 }).map((a) => Buffer.from(a)),
        udh: fc.option(
          fc.uint8Array({ minLength: 1, maxLength: 12 }).map((a) => Buffer.from(a)),
          {
            nil: undefined,
          },
        ),
        validity: fc.option(fc.integer({ min: 0, max: 99 * 86_400 }), { nil: undefined }),
        sar: fc.option(fc.tuple(fc.integer({ min: 0, max: 0xffff }), octet, octet), { nil: undefined }),
      })
      .map(({ validity, sar, ...fields }): SubmitSmFields => {
        const filled: SubmitSmFields = { ...fields };
        if (validity !== undefined) filled.validity_period = validityPeriod(validity);
        if (sar) [filled.sar_msg_ref_num, filled.sar_total_segments, filled.sar_segment_seqnum] = sar;
        return filled;
      });
    fc.assert(
      fc.property(submit, fc.integer({ min: 1, max: 0x7fffffff }), (fields, sequence_number) => {
        const theirs = theirBytes("submit_sm", {
          ...asNodeSmppOptions(fields, fields.validity_period),
          sequence_number,
        });
        expect(hex(ours(submitSm(fields), sequence_number))).toBe(hex(theirs));
      }),
      { numRuns: 300 },
    );
  });

  it("refuses user data over 255 octets, as node-smpp does", () => {
    const fields = { ...SUBMIT_FIELDS, udh: UDH, short_message: Buffer.alloc(250) };
    expect(() => new smpp.PDU("submit_sm", asNodeSmppOptions(fields)).toBuffer()).toThrow();
    expect(() => encodePdu(submitSm(fields))).toThrow(RangeError);
  });

  it("writes node-smpp's bytes for the session's other requests", () => {
    const bind = {
      system_id: "shiri",
      password: "secret",
      system_type: "",
      interface_version: 0x34,
      addr_ton: 0,
      addr_npi: 0,
      address_range: "",
    };
    expect(hex(ours(request("bind_transceiver", bind), 1))).toBe(
      hex(theirBytes("bind_transceiver", { ...bind, sequence_number: 1 })),
    );
    for (const command of ["enquire_link", "unbind"])
      expect(hex(ours(request(command), 7))).toBe(hex(theirBytes(command, { sequence_number: 7 })));
  });

  it("answers every request as node-smpp's PDU.response() did, an unknown one with generic_nack", () => {
    const requests = [
      theirBytes("deliver_sm", { short_message: "x", sequence_number: 3 }),
      theirBytes("enquire_link", { sequence_number: 4 }),
      theirBytes("unbind", { sequence_number: 5 }),
      theirBytes("data_sm", { sequence_number: 6 }),
      theirBytes("query_sm", { message_id: "1", sequence_number: 7 }),
    ];
    const unknown = Buffer.alloc(16);
    unknown.writeUInt32BE(16, 0);
    unknown.writeUInt32BE(0x00000777, 4);
    unknown.writeUInt32BE(8, 12);
    for (const bytes of [...requests, unknown]) {
      const mine = decodePdu(bytes);
      const theirs = new smpp.PDU(bytes);
      expect(isResponse(mine)).toBe(false);
      // The session accepts only deliver_sm, enquire_link and unbind; anything else it refuses.
      const accepted = ["deliver_sm", "enquire_link", "unbind"].includes(mine.command);
      for (const status of accepted ? [0, 0x03, 0x64] : [0x03, 0x64])
        expect(hex(encodePdu(responseTo(mine, status)))).toBe(
          hex(theirs.response({ command_status: status }).toBuffer()),
        );
    }
    expect(decodePdu(unknown).command).toBe("unknown");
    expect(responseTo(decodePdu(unknown)).command).toBe("generic_nack");
  });
});

/** What node-smpp reads of a mandatory field, in the form Shiri's codec keeps it. */
function theirField(pdu: PDU, name: string, sent: PduOptions): unknown {
  // node-smpp turns times into Dates and decodes short_message: compare with what was sent.
  if (name === "schedule_delivery_time" || name === "validity_period") return sent[name] ?? "";
  if (name === "short_message") return null;
  return pdu[name];
}

describe("decodePdu: what node-smpp writes", () => {
  const receipt = receiptText(1234567890);
  const cases: Array<[string, string, PduOptions]> = [
    ["bind_transceiver_resp", "bind_transceiver_resp", { system_id: "SMSC", sc_interface_version: 0x34 }],
    ["bind_transceiver_resp without TLV", "bind_transceiver_resp", { system_id: "" }],
    ["bind_transceiver", "bind_transceiver", { system_id: "a", password: "b", system_type: "c" }],
    ["submit_sm_resp", "submit_sm_resp", { message_id: "499602d2" }],
    ["submit_sm_resp, empty id", "submit_sm_resp", { message_id: "" }],
    ["submit_sm_resp, maximal id", "submit_sm_resp", { message_id: "f".repeat(64) }],
    ["a refusing submit_sm_resp (no body)", "submit_sm_resp", { command_status: 0x58 }],
    ["enquire_link", "enquire_link", {}],
    ["unbind", "unbind", {}],
    ["generic_nack", "generic_nack", { command_status: 0x03 }],
    ["outbind", "outbind", { system_id: "SMSC", password: "pw" }],
    [
      "alert_notification",
      "alert_notification",
      { source_addr: "263771234567", esme_addr: "SHIRI", ms_availability_status: 0 },
    ],
    [
      "a receipt with every TLV Shiri reads",
      "deliver_sm",
      {
        esm_class: 0x04,
        short_message: receipt,
        receipted_message_id: "499602d2",
        message_state: 2,
        network_error_code: Buffer.from([0x03, 0x00, 0x01]),
        user_message_reference: 0x0102,
      },
    ],
    [
      "a deliver_sm with times and an unknown TLV",
      "deliver_sm",
      {
        short_message: receipt,
        schedule_delivery_time: "261125141200000+",
        validity_period: "000001000000000R",
        more_messages_to_send: 1,
      },
    ],
    ["a deliver_sm with message_payload", "deliver_sm", { message_payload: Buffer.from(receipt) }],
  ];
  for (const [name, command, options] of cases) {
    it(`reads node-smpp's fields and writes its bytes back: ${name}`, () => {
      const bytes = theirBytes(command, { ...options, sequence_number: 77 });
      const mine = decodePdu(bytes);
      const theirs = new smpp.PDU(bytes);
      expect([mine.command, mine.command_id, mine.command_status, mine.sequence_number]).toEqual([
        theirs.command,
        theirs.command_id,
        theirs.command_status,
        theirs.sequence_number,
      ]);
      expect(isResponse(mine)).toBe(theirs.isResponse());
      for (const field of COMMANDS[command]?.body ?? []) {
        const expected = theirField(theirs, field.name, options);
        if (expected !== null) expect(mine.fields[field.name] ?? undefined, field.name).toEqual(expected);
      }
      for (const tlv of [
        "sc_interface_version",
        "receipted_message_id",
        "message_state",
        "network_error_code",
      ])
        expect(tlvValue(mine, tlv), tlv).toEqual(theirs[tlv]);
      expect(hex(encodePdu(mine))).toBe(hex(bytes));
    });
  }

  it("keeps an unknown TLV's octets, and writes them back", () => {
    const bytes = theirBytes("deliver_sm", { short_message: "x", sequence_number: 1 });
    const unknownTlv = Buffer.from([0x14, 0x01, 0x00, 0x03, 0xaa, 0xbb, 0xcc]);
    const withTlv = Buffer.concat([bytes, unknownTlv]);
    withTlv.writeUInt32BE(withTlv.length, 0);
    const mine = decodePdu(withTlv);
    expect(mine.tlvs).toEqual([{ tag: 0x1401, value: Buffer.from([0xaa, 0xbb, 0xcc]) }]);
    expect(new smpp.PDU(withTlv)[0x1401]).toEqual(Buffer.from([0xaa, 0xbb, 0xcc]));
    expect(hex(encodePdu(mine))).toBe(hex(withTlv));
  });
});

/** A deliver_sm as Shiri read it through node-smpp, but for the text (compared apart). */
function viewWithoutText(view: DeliverSm) {
  const { short_message: _, ...rest } = view;
  return rest;
}

/** What Shiri read of a deliver_sm through node-smpp (session.ts before this codec). */
function theirView(bytes: Buffer): { text: string; udh: Buffer[]; tlvs: Record<string, unknown> } {
  const pdu = new smpp.PDU(bytes);
  const read = (sm: unknown) => {
    if (typeof sm !== "object" || sm === null || !("message" in sm)) return { text: "", udh: [] };
    const message: unknown = sm.message;
    const udh = "udh" in sm && Array.isArray(sm.udh) ? (sm.udh as Buffer[]) : [];
    const text =
      typeof message === "string" ? message : Buffer.isBuffer(message) ? message.toString("latin1") : "";
    return { text, udh };
  };
  let seen = read(pdu.short_message);
  if (seen.text === "" && pdu.message_payload !== undefined) seen = read(pdu.message_payload);
  const tlvs: Record<string, unknown> = {};
  for (const name of [
    "receipted_message_id",
    "message_state",
    "network_error_code",
    "user_message_reference",
    "sar_msg_ref_num",
    "sar_total_segments",
    "sar_segment_seqnum",
  ])
    if (pdu[name] !== undefined) tlvs[name] = pdu[name];
  return { ...seen, tlvs };
}

describe("toDeliverSm: a deliver_sm as Shiri reads it", () => {
  const receipt = receiptText(1234567890);
  const cases: Array<[string, PduOptions]> = [
    [
      "a receipt with every TLV Shiri reads",
      {
        short_message: receipt,
        receipted_message_id: "499602d2",
        message_state: 2,
        network_error_code: Buffer.from([0x03, 0x00, 0x01]),
        user_message_reference: 0x0102,
      },
    ],
    ["a receipt with no TLV", { short_message: receipt }],
    ["an intermediate notification", { esm_class: 0x20, short_message: receipt, message_state: 1 }],
    ["data_coding 0xF0", { data_coding: 0xf0, short_message: Buffer.from(receipt, "latin1") }],
    [
      "the default alphabet but ESC",
      { short_message: Buffer.from([...Array(128).keys()].filter((o) => o !== 0x1b)) },
    ],
    [
      "escapes of the extension table",
      {
        short_message: Buffer.from([0x1b, 0x14, 0x1b, 0x28, 0x1b, 0x29, 0x1b, 0x65, 0x1b, 0x3c, 0x1b, 0x2f]),
      },
    ],
    ["an empty short_message", { short_message: Buffer.alloc(0) }],
    ["a mobile-originated message", { esm_class: 0, short_message: "Mhoro Shiri" }],
    ["a UDH", { esm_class: 0x40, short_message: { udh: UDH, message: Buffer.from("part one") } }],
    ["UCS-2", { data_coding: 8, short_message: Buffer.from("00480069d83dde00", "hex") }],
    ["Latin-1", { data_coding: 3, short_message: Buffer.from("café", "latin1") }],
    ["8-bit binary", { data_coding: 4, short_message: Buffer.from([0x00, 0x80, 0xff]) }],
    ["message_payload", { short_message: Buffer.alloc(0), message_payload: Buffer.from(receipt) }],
    ["an unknown TLV", { short_message: receipt, more_messages_to_send: 1 }],
    ["a validity period", { short_message: receipt, validity_period: "000001000000000R" }],
    [
      "a SAR part",
      {
        esm_class: 0,
        short_message: Buffer.from("p2"),
        sar_msg_ref_num: 0x1234,
        sar_total_segments: 3,
        sar_segment_seqnum: 2,
      },
    ],
  ];
  for (const [name, options] of cases) {
    it(`reads what node-smpp read: ${name}`, () => {
      const bytes = deliverSmBytes(options);
      const view = toDeliverSm(decodePdu(bytes));
      const theirs = theirView(bytes);
      expect(view.short_message).toBe(theirs.text);
      expect(view.udh).toEqual(theirs.udh);
      expect(view.tlvs).toEqual(theirs.tlvs);
      const fields = new smpp.PDU(bytes);
      for (const field of [
        "source_addr",
        "destination_addr",
        "esm_class",
        "data_coding",
        "service_type",
      ] as const)
        expect(view[field], field).toEqual(fields[field]);
    });
  }

  it("reads a deliver_sm whose body ends at a field's boundary, the rest absent, as node-smpp did", () => {
    const whole = deliverSmBytes({ short_message: receipt });
    const cut = Buffer.from(whole.subarray(0, 40)); // after destination_addr
    cut.writeUInt32BE(cut.length, 0);
    const view = toDeliverSm(decodePdu(cut));
    expect(viewWithoutText(view)).toMatchObject({ destination_addr: "SHIRI", esm_class: 0, udh: [] });
    expect(view.short_message).toBe("");
    expect(new smpp.PDU(cut).destination_addr).toBe("SHIRI");
  });

  it("keeps a message's user data as octets, after its UDH, and none for a receipt", () => {
    const text = Buffer.from([0x00, 0x53, 0xd8, 0x3d]);
    const udh = toDeliverSm(
      decodePdu(
        deliverSmBytes({ esm_class: 0x40, data_coding: 8, short_message: { udh: UDH, message: text } }),
      ),
    );
    expect(hex(udh.user_data ?? Buffer.alloc(0))).toBe(hex(text));
    expect(udh.udh).toEqual([UDH.subarray(1)]);
    expect(udh.isReceipt).toBe(false);
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
    expect(toDeliverSm(decodePdu(deliverSmBytes({ short_message: receipt }))).user_data).toBeUndefined();
  });

  // Receipt text is decoded with the project's tables (src/smpp/data-coding.ts), as inbound
  // messages are, where node-smpp had its own: these differ, none in what a receipt's fields hold.
  it("reads IA5 (data_coding 1) as ASCII, where node-smpp read it as GSM 03.38", () => {
    const bytes = deliverSmBytes({ data_coding: 1, short_message: Buffer.from("id:a_b@c$") });
    expect(toDeliverSm(decodePdu(bytes)).short_message).toBe("id:a_b@c$");
    expect(theirView(bytes).text).toBe("id:a§b¡c¤");
  });

  it("reads a GSM octet with its eighth bit set without it, where node-smpp read a space", () => {
    const bytes = deliverSmBytes({ short_message: Buffer.from([0x41, 0xc1]) });
    expect(toDeliverSm(decodePdu(bytes)).short_message).toBe("AA");
    expect(theirView(bytes).text).toBe("A ");
  });

  it("reads the id and status of every receipt the same as before", () => {
    const receipts = fc.record({
      id: fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), fc.stringMatching(/^[0-9a-f]{1,20}$/)),
      data_coding: fc.constantFrom(0, 1, 3, 0xf0),
      esm_class: fc.constantFrom(0x04, 0x08, 0x20),
    });
    fc.assert(
      fc.property(receipts, ({ id, data_coding, esm_class }) => {
        const text = receiptText(id);
        const bytes = deliverSmBytes({ esm_class, data_coding, short_message: Buffer.from(text, "latin1") });
        const view = toDeliverSm(decodePdu(bytes));
        expect(view.short_message).toBe(text);
        expect(theirView(bytes).text).toBe(text);
        expect(view.isReceipt).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe("decodePdu: malformed input", () => {
  const withLength = (bytes: Buffer) => {
    const copy = Buffer.from(bytes);
    copy.writeUInt32BE(copy.length, 0);
    return copy;
  };

  it("refuses a C-octet string with no NUL within its maximum size, naming the header", () => {
    const bytes = theirBytes("deliver_sm", { source_addr: "1".repeat(21), sequence_number: 12 });
    const error = (() => {
      try {
        decodePdu(bytes);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(PduBodyError);
    expect((error as PduBodyError).header).toMatchObject({ command: "deliver_sm", sequence_number: 12 });
    expect((error as PduBodyError).message).toMatch(/source_addr has no NUL within 21 octets/);
    // 20 characters and the NUL fit.
    expect(
      stringField(decodePdu(theirBytes("deliver_sm", { source_addr: "1".repeat(20) })), "source_addr"),
    ).toBe("1".repeat(20));
  });

  it("reads a message_id over SMPP's 65 octets, as carriers send them", () => {
    const long = theirBytes("submit_sm_resp", { message_id: "a".repeat(100), sequence_number: 3 });
    expect(stringField(decodePdu(long), "message_id")).toBe("a".repeat(100));
  });

  it("reads a response's last field with no NUL to the end of the PDU, as node-smpp did", () => {
    const unterminated = (command: string, field: string, value: string) => {
      const bytes = theirBytes(command, { [field]: value, sequence_number: 3 });
      return withLength(bytes.subarray(0, bytes.length - 1));
    };
    for (const [command, field, value] of [
      ["submit_sm_resp", "message_id", "ABC123"],
      ["deliver_sm_resp", "message_id", "a".repeat(100)],
      ["bind_transceiver_resp", "system_id", "SMSC"],
    ] as const) {
      const bytes = unterminated(command, field, value);
      expect(stringField(decodePdu(bytes), field)).toBe(value);
      expect(new smpp.PDU(bytes)[field]).toBe(value);
    }
    // Still within its maximum size: a system_id of 16 octets and no NUL does not fit 16.
    expect(() => decodePdu(unterminated("bind_transceiver_resp", "system_id", "S".repeat(16)))).toThrow(
      /system_id has no NUL within 16 octets/,
    );
    // Only a response's last field: a request's is refused, its NUL missing.
    const bind = theirBytes("bind_transceiver", {
      system_id: "shiri",
      address_range: "263",
      sequence_number: 4,
    });
    expect(() => decodePdu(withLength(bind.subarray(0, bind.length - 1)))).toThrow(
      /address_range has no NUL within 41 octets/,
    );
  });

  it("refuses a field cut in the middle, and a TLV longer than what is left", () => {
    const whole = theirBytes("deliver_sm", {
      source_addr: "263771234567",
      short_message: "hello",
      receipted_message_id: "abc",
    });
    // Cut inside source_addr, then inside short_message, then inside the TLV.
    for (const end of [22, whole.length - 12, whole.length - 2])
      expect(() => decodePdu(withLength(whole.subarray(0, end)))).toThrow(PduBodyError);
    const stray = withLength(Buffer.concat([whole, Buffer.from([0x00, 0x1e])]));
    expect(() => decodePdu(stray)).toThrow(/after the last TLV/);
  });

  it("refuses a known integer TLV of the wrong size", () => {
    const whole = theirBytes("deliver_sm", { short_message: "x" });
    const tlv = Buffer.from([0x04, 0x27, 0x00, 0x02, 0x00, 0x02]); // message_state is one octet
    expect(() => decodePdu(withLength(Buffer.concat([whole, tlv])))).toThrow(
      /TLV 0x427 does not hold its type/,
    );
  });

  it("refuses bytes whose command_length lies: not a body error but a framing one", () => {
    const bytes = theirBytes("enquire_link", { sequence_number: 1 });
    const lying = Buffer.from(bytes);
    lying.writeUInt32BE(20, 0);
    expect(() => decodePdu(lying)).toThrow(/does not match its command_length/);
    expect(() => decodePdu(lying)).not.toThrow(PduBodyError);
    expect(() => decodePdu(bytes.subarray(0, 12))).toThrow(/does not match its command_length/);
  });
});
