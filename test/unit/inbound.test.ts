import { describe, expect, it } from "vitest";
import { internationalForm } from "../../src/domain/numbers.ts";
import { encodeGsm7, encodeUcs2 } from "../../src/domain/segments.ts";
import { DEFAULT_KEYWORDS, keywordOf } from "../../src/inbound/keywords.ts";
import { partOf, repeatsIn } from "../../src/inbound/store-parts.ts";
import { concatenationOf } from "../../src/inbound/user-data.ts";
import { prepareSend, withOptOuts } from "../../src/sending/prepare-send.ts";
import { decodeText, encodingOf } from "../../src/smpp/data-coding.ts";

describe("internationalForm", () => {
  it("writes one number one way: +263…, 263…, 00263… and 0… alike", () => {
    for (const written of ["+263771234567", "263771234567", "00263771234567", "0771234567", " 0771234567 "])
      expect(internationalForm(written)).toBe("263771234567");
  });

  it("takes a national number without its 0 only when the SMSC says it is national (TON 2)", () => {
    expect(internationalForm("771234567", 2)).toBe("263771234567");
    expect(internationalForm("771234567", 1)).toBe("771234567");
  });

  it("keeps short codes, foreign numbers and names as they are", () => {
    expect(internationalForm("33000")).toBe("33000");
    expect(internationalForm("+447700900123")).toBe("447700900123");
    expect(internationalForm("Econet")).toBe("Econet");
  });
});

describe("concatenationOf", () => {
  it("reads an 8-bit and a 16-bit reference UDH, and the SAR TLVs", () => {
    expect(concatenationOf([Buffer.from([0x00, 0x03, 0x2a, 0x03, 0x02])], {})).toEqual({
      ref: 42,
      total: 3,
      seq: 2,
    });
    expect(concatenationOf([Buffer.from([0x08, 0x04, 0x12, 0x34, 0x02, 0x01])], {})).toEqual({
      ref: 0x1234,
      total: 2,
      seq: 1,
    });
    expect(concatenationOf([], { sar_msg_ref_num: 7, sar_total_segments: 4, sar_segment_seqnum: 4 })).toEqual(
      {
        ref: 7,
        total: 4,
        seq: 4,
      },
    );
  });

  it("takes a part numbered outside 1..total, or a total of 1, as a message of its own", () => {
    expect(concatenationOf([Buffer.from([0x00, 0x03, 0x01, 0x02, 0x03])], {})).toBeNull();
    expect(concatenationOf([Buffer.from([0x00, 0x03, 0x01, 0x02, 0x00])], {})).toBeNull();
    expect(concatenationOf([Buffer.from([0x00, 0x03, 0x01, 0x01, 0x01])], {})).toBeNull();
    // Another information element (a port address) is no concatenation.
    expect(concatenationOf([Buffer.from([0x05, 0x04, 0x0b, 0x84, 0x23, 0xf0])], {})).toBeNull();
  });
});

describe("decodeText", () => {
  it("reads the four encodings by their data_coding", () => {
    expect(encodingOf(0)).toBe("gsm7");
    expect(encodingOf(1)).toBe("ascii");
    expect(encodingOf(3)).toBe("latin1");
    expect(encodingOf(8)).toBe("ucs2");
    expect(encodingOf(0xf1)).toBe("gsm7");
    expect(encodingOf(0xf5)).toBe("latin1");
    expect(decodeText(encodeGsm7("Mhoro @ £5 {ok} €"), "gsm7")).toBe("Mhoro @ £5 {ok} €");
    // IA5 is ASCII: '@' and '_' are themselves, not GSM 03.38's ¡ and §.
    expect(decodeText(Buffer.from("a@b_c$", "latin1"), "ascii")).toBe("a@b_c$");
    expect(decodeText(Buffer.from("café à Harare", "latin1"), "latin1")).toBe("café à Harare");
    expect(decodeText(encodeUcs2("Ndatenda 🙏🏾"), "ucs2")).toBe("Ndatenda 🙏🏾");
  });

  it("reads a character split between two parts once the parts are joined", () => {
    const gsm = encodeGsm7("ab€");
    expect(decodeText(Buffer.concat([gsm.subarray(0, 3), gsm.subarray(3)]), "gsm7")).toBe("ab€");
    const ucs2 = encodeUcs2("x😀");
    const [first, second] = [ucs2.subarray(0, 4), ucs2.subarray(4)];
    expect(decodeText(Buffer.concat([first, second]), "ucs2")).toBe("x😀");
  });

  it("keeps what it can of malformed octets", () => {
    expect(decodeText(Buffer.from([0x41, 0x1b]), "gsm7")).toBe("A");
    expect(decodeText(Buffer.from([0xc1]), "gsm7")).toBe("A");
    expect(decodeText(Buffer.from([0x00, 0x41, 0x00]), "ucs2")).toBe("A");
  });
});

describe("keywordOf", () => {
  it("matches the whole text, any case, surrounding spaces ignored", () => {
    expect(keywordOf("  stop \n", { ...DEFAULT_KEYWORDS })).toEqual({ keyword: "STOP", kind: "opt_out" });
    expect(keywordOf("Unsubscribe", DEFAULT_KEYWORDS)).toEqual({ keyword: "UNSUBSCRIBE", kind: "opt_out" });
    expect(keywordOf("start", DEFAULT_KEYWORDS)).toEqual({ keyword: "START", kind: "opt_in" });
    expect(keywordOf("INFO", DEFAULT_KEYWORDS)).toEqual({ keyword: "INFO", kind: "help" });
  });

  it("reads an opt-out or help word with anything but letters and digits around it", () => {
    for (const text of [
      "STOP!",
      "Stop.",
      " stop... ",
      "STOP\u0000",
      "STOP@",
      '"STOP"',
      "\u0000STOP\r\n",
      "STOP 🛑",
      "Stop 😡",
      "\u200eSTOP", // a left-to-right mark, as right-to-left keyboards insert
      "ＳＴＯＰ", // full-width, from an East Asian input method
    ])
      expect(keywordOf(text, DEFAULT_KEYWORDS), JSON.stringify(text)).toEqual({
        keyword: "STOP",
        kind: "opt_out",
      });
    expect(keywordOf("help?", DEFAULT_KEYWORDS)).toEqual({ keyword: "HELP", kind: "help" });
  });

  it("reads an opt-in word with white space and invisible characters around it only", () => {
    for (const text of [" start \n", "\u200bYES", "ＹＥＳ", "unstop\r\n"])
      expect(keywordOf(text, DEFAULT_KEYWORDS), JSON.stringify(text)).toMatchObject({ kind: "opt_in" });
    for (const text of ["Yes.", "Start?", "yes :)", "YES!"])
      expect(keywordOf(text, DEFAULT_KEYWORDS), JSON.stringify(text)).toBeNull();
  });

  it("reads a STOP whose SMSC counted a C string's NUL into the message", () => {
    const withNul = (encoding: "gsm7" | "ucs2") =>
      decodeText(
        Buffer.concat([
          (encoding === "ucs2" ? encodeUcs2 : encodeGsm7)("STOP"),
          Buffer.alloc(encoding === "ucs2" ? 2 : 1),
        ]),
        encoding,
      );
    expect(withNul("gsm7")).toBe("STOP@");
    for (const encoding of ["gsm7", "ucs2"] as const)
      expect(keywordOf(withNul(encoding), DEFAULT_KEYWORDS)).toEqual({ keyword: "STOP", kind: "opt_out" });
  });

  it("reads a character outside the Basic Multilingual Plane as one character", () => {
    // A letter is a letter, however it is encoded: STOP followed by one is not STOP.
    expect(keywordOf("STOP𐐀", DEFAULT_KEYWORDS)).toBeNull(); // Deseret
    expect(keywordOf("STOP𞤀", DEFAULT_KEYWORDS)).toBeNull(); // Adlam
    // A format mark outside it is invisible, so an opt-in word may carry one.
    expect(keywordOf("YES\u{E0001}", DEFAULT_KEYWORDS)).toEqual({ keyword: "YES", kind: "opt_in" });
    expect(keywordOf("🛑STOP🛑", DEFAULT_KEYWORDS)).toEqual({ keyword: "STOP", kind: "opt_out" });
  });

  it("matches nothing inside a longer text", () => {
    expect(keywordOf("please stop", DEFAULT_KEYWORDS)).toBeNull();
    expect(keywordOf("STOP it", DEFAULT_KEYWORDS)).toBeNull();
    expect(keywordOf("S.T.O.P", DEFAULT_KEYWORDS)).toBeNull();
    expect(keywordOf("?!", DEFAULT_KEYWORDS)).toBeNull();
    expect(keywordOf("", DEFAULT_KEYWORDS)).toBeNull();
  });

  it("reads a long text of punctuation in one pass (a 255-part message must not stall the worker)", () => {
    expect(keywordOf(`a${"!".repeat(200_000)}a`, DEFAULT_KEYWORDS)).toBeNull();
    expect(keywordOf(`${" ".repeat(100_000)}stop${"!".repeat(100_000)}`, DEFAULT_KEYWORDS)).toMatchObject({
      kind: "opt_out",
    });
  }, 2_000);

  it("reads an account's own lists", () => {
    const lists = { opt_out: ["MISA"], opt_in: ["TANGA"], help: [] };
    expect(keywordOf("misa", lists)).toEqual({ keyword: "MISA", kind: "opt_out" });
    expect(keywordOf("STOP", lists)).toBeNull();
  });
});

describe("withOptOuts", () => {
  it("fails the opted-out messages at a charge of 0 and holds the rest", () => {
    const send = prepareSend({
      accountId: "a",
      currency: "USD",
      from: "SHIRI",
      body: "hi",
      recipients: ["+263771000001", "+263771000002"],
      webhookUrl: null,
      webhookEvents: null,
      bulk: true,
    });
    const [first, second] = send.messages;
    const written = withOptOuts(send, new Set([second?.id ?? ""]));
    expect(written.messages[0]).toEqual(first);
    expect(written.messages[1]).toMatchObject({
      status: "failed",
      operator_response: "OPTED_OUT",
      charge: 0,
    });
    expect(written.total).toBe(first?.charge);
    expect(withOptOuts(send, new Set())).toBe(send);
  });
});

describe("repeatsIn", () => {
  /** A handset's PDU as the SMSC sends it; with `seq`, part `seq` of 2 (8-bit reference 9). */
  const pdu = (from: string, text: string, seq?: number) =>
    partOf("econet", {
      source_addr: from,
      source_addr_ton: 1,
      source_addr_npi: 1,
      destination_addr: "33000",
      dest_addr_ton: 0,
      dest_addr_npi: 1,
      service_type: "",
      esm_class: seq ? 0x40 : 0,
      data_coding: 0,
      short_message: text,
      udh: seq ? [Buffer.from([0x00, 0x03, 0x09, 0x02, seq])] : [],
      user_data: encodeGsm7(text),
      isReceipt: false,
      isIntermediate: false,
      tlvs: {},
    });
  const stop = pdu("263771000001", "STOP");
  const start = pdu("263771000001", "START");
  const none = new Set<string>();

  it("takes the same PDU again, nothing from its sender between, as the SMSC's repeat", () => {
    expect(repeatsIn([stop, stop, stop], none)).toEqual([false, true, true]);
    // Another sender's message between changes nothing.
    expect(repeatsIn([stop, pdu("263771000002", "hi"), stop], none)).toEqual([false, false, true]);
    // Stored before, and still its sender's last word (what storeParts reads).
    expect(repeatsIn([stop], new Set([stop.fingerprint.toString("hex")]))).toEqual([true]);
  });

  it("never takes a message that follows another one from its sender as a repeat", () => {
    expect(repeatsIn([stop, start, stop], none)).toEqual([false, false, false]);
    // Stored before, but another message of the sender comes first in this batch.
    expect(repeatsIn([start, stop], new Set([stop.fingerprint.toString("hex")]))).toEqual([false, false]);
  });

  it("takes a part sent again after another part of its own message as a repeat", () => {
    const [one, two] = [pdu("263771000003", "first half", 1), pdu("263771000003", "second half", 2)];
    expect(repeatsIn([one, two, one, two], none)).toEqual([false, false, true, true]);
    expect(repeatsIn([two, one], new Set([one.fingerprint.toString("hex")]))).toEqual([false, true]);
  });
});
