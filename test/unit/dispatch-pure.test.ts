import { describe, expect, it } from "vitest";
import type { SmscIdFormat } from "../../carriers/index.ts";
import { SMPP_DEFAULTS } from "../../carriers/smpp-defaults.ts";
import { buildSubmits } from "../../src/dispatch/build-submits.ts";
import { jobsToFetch } from "../../src/dispatch/dispatcher.ts";
import { retryDelaySeconds } from "../../src/dispatch/settle.ts";
import { TpsPacer } from "../../src/dispatch/tps-pacer.ts";
import { newMessageId } from "../../src/domain/message-id.ts";
import { decodeUcs2 } from "../../src/domain/segments.ts";
import { readReceipt } from "../../src/receipts/read-receipt.ts";
import { isPassingRefusal, STATUS } from "../../src/smpp/command-status.ts";
import type { DeliverSm } from "../../src/smpp/session.ts";
import { secondsLeft } from "../../src/smpp/submit-sm.ts";
import { RECEIPT_ADDRESSES } from "../support/pdus.ts";

const message = (body: string, sender = "SHIRI") => ({
  id: "0190a1b2-c3d4-7000-8000-00000000e5f6",
  to: "+263771234567",
  body,
  sender_id: sender,
  expiresAt: new Date(Date.now() + 3_600_000),
});

describe("buildSubmits", () => {
  it("sends a single GSM segment with data_coding 0, no UDH, to the wire number", () => {
    const [part, ...rest] = buildSubmits(message("Mhoro"));
    expect(rest).toHaveLength(0);
    expect(part?.partNo).toBe(1);
    expect(part?.params).toMatchObject({
      destination_addr: "263771234567",
      source_addr: "SHIRI",
      data_coding: 0,
    });
    expect(part?.params.udh).toBeUndefined();
    expect(part?.params.short_message.toString("latin1")).toBe("Mhoro");
  });

  it("splits UCS-2 into concatenated parts sharing one reference from the message id", () => {
    const body = `😀${"x".repeat(140)}`;
    const parts = buildSubmits(message(body));
    expect(parts.length).toBe(3);
    for (const [i, p] of parts.entries()) {
      expect(p.params.data_coding).toBe(8);
      expect([...(p.params.udh ?? [])]).toEqual([0x05, 0x00, 0x03, 0xf6, 3, i + 1]);
    }
    expect(parts.map((p) => decodeUcs2(p.params.short_message)).join("")).toBe(body);
  });

  it("gives long messages made in one millisecond references of their own (UDH and SAR)", () => {
    // Their ids share the first 48 bits, the time: a reference from there was the same for all.
    const ids = Array.from({ length: 64 }, () => newMessageId(Date.now()));
    const long = (id: string, dialect?: Parameters<typeof buildSubmits>[1]) =>
      buildSubmits({ ...message("x".repeat(300)), id }, dialect)[0]?.params;
    const udhRefs = new Set(ids.map((id) => long(id)?.udh?.[3]));
    const sarRefs = new Set(ids.map((id) => long(id, { ...SMPP_DEFAULTS, concatenation: "sar" })?.sar?.ref));
    // 64 draws of 256 (UDH) or 65,536 (SAR) references: a handful of repeats at most.
    expect(udhRefs.size).toBeGreaterThan(40);
    expect(sarRefs.size).toBeGreaterThan(60);
  });

  it("marks a numeric sender as an international number and an alphanumeric one not at all", () => {
    expect(buildSubmits(message("x", "263771000000"))[0]?.params).toMatchObject({
      source_addr_ton: 1,
      source_addr_npi: 1,
    });
    expect(buildSubmits(message("x", "SHIRI"))[0]?.params.source_addr_ton).toBeUndefined();
  });

  it("writes the carrier's dialect: GSM as data_coding 1, SAR TLVs instead of a UDH, numeric TON/NPI", () => {
    const dialect = {
      gsm_data_coding: 1 as const,
      concatenation: "sar" as const,
      numeric_source_addr_ton: 2,
      numeric_source_addr_npi: 9,
    };
    const parts = buildSubmits(message("Hello there. ".repeat(20), "263771000000"), dialect);
    expect(parts.length).toBe(2);
    for (const [i, p] of parts.entries()) {
      expect(p.params).toMatchObject({ data_coding: 1, source_addr_ton: 2, source_addr_npi: 9 });
      expect(p.params.udh).toBeUndefined();
      expect(p.params.sar).toEqual({ ref: 0xe5f6, total: 2, seq: i + 1 });
    }
    const [ucs2] = buildSubmits(message("😀"), dialect);
    expect(ucs2?.params).toMatchObject({ data_coding: 8 });
    expect(ucs2?.params.sar).toBeUndefined();
  });

  it("gives the carrier what is left of the validity when the PDU is written, however little", () => {
    const expiresAt = new Date(Date.UTC(2026, 10, 29, 12, 0, 0));
    expect(buildSubmits({ ...message("x"), expiresAt })[0]?.params.validUntil).toEqual(expiresAt);
    const at = (msBefore: number) => secondsLeft(expiresAt, expiresAt.getTime() - msBefore);
    expect(at(3_600_900)).toBe(3600);
    // 30 s left: 30 s, not a floor of 60 that outlived the message's expiry.
    expect(at(30_500)).toBe(30);
    // Less than a second, or none: one (0 would be the SMSC's default validity).
    expect([at(200), at(0), at(-5_000)]).toEqual([1, 1, 1]);
  });

  it("refuses a message with no routable destination", () => {
    expect(() => buildSubmits({ ...message("x"), to: "0771234567" })).toThrow(/routable/);
  });
});

describe("TpsPacer", () => {
  it("lets `perSecond` through, then reuses a slot only a second after its PDU was answered", async () => {
    let now = 0;
    const pacer = new TpsPacer(2, () => now);
    const answerFirst = await pacer.acquire();
    const answerSecond = await pacer.acquire();
    let third = false;
    const pending = pacer.acquire().then((answer) => {
      third = true;
      return answer;
    });
    now = 5_000; // long after, but the first PDU is still on the wire: its slot stays taken
    await new Promise((r) => setTimeout(r, 5));
    expect(third).toBe(false);
    answerFirst(); // answered at t = 5,000 ms
    answerSecond();
    await new Promise((r) => setTimeout(r, 5));
    expect(third).toBe(false); // the slot is free again a second (and 5 ms) later
    now = 6_005;
    await pending;
    expect(third).toBe(true);
  });

  it("refuses a non-positive rate", () => {
    expect(() => new TpsPacer(0)).toThrow(RangeError);
  });
});

describe("retryDelaySeconds", () => {
  it("grows with attempts and stays within 60 s", () => {
    for (let attempts = 1; attempts < 20; attempts++) {
      const d = retryDelaySeconds(attempts);
      const base = Math.min(60, 2 ** (attempts - 1));
      expect(d).toBeGreaterThanOrEqual(Math.ceil(base / 2));
      expect(d).toBeLessThanOrEqual(base);
    }
  });
});

describe("readReceipt", () => {
  const pdu = (over: Partial<DeliverSm>): DeliverSm => ({
    service_type: "",
    ...RECEIPT_ADDRESSES,
    esm_class: 0x04,
    data_coding: 0,
    short_message:
      "id:00FF sub:001 dlvrd:001 submit date:2611220700 done date:2611220701 stat:DELIVRD err:000 text:x",
    udh: [],
    isReceipt: true,
    isIntermediate: false,
    tlvs: {},
    ...over,
  });
  const dialect = (submit: SmscIdFormat, receipt: SmscIdFormat = submit) => ({
    id_format_submit: submit,
    id_format_receipt: receipt,
    receipt_scope: "segment" as const,
  });
  const read = (p: DeliverSm, d: ReturnType<typeof dialect>) => {
    const r = readReceipt(p, d);
    return r.kind === "receipt"
      ? { smscId: r.receipt.smscId, state: r.receipt.state, err: r.receipt.err }
      : r;
  };

  it("reads id and state from the text, canonical whatever the case and padding", () => {
    expect(read(pdu({}), dialect("hex"))).toEqual({ smscId: "255", state: "DELIVRD", err: null });
    expect(read(pdu({ short_message: "id:00ff stat:UNDELIV err:001" }), dialect("hex"))).toEqual({
      smscId: "255",
      state: "UNDELIV",
      err: "001",
    });
  });

  it("keeps a string id exactly as written", () => {
    expect(read(pdu({ short_message: "id:00FF stat:delivrd" }), dialect("string"))).toMatchObject({
      smscId: "00FF",
      state: "DELIVRD",
    });
  });

  it("prefers the TLVs to the text, reading receipted_message_id in the submit_sm_resp format", () => {
    const r = read(
      pdu({ tlvs: { receipted_message_id: "3e8", message_state: 5 } }),
      dialect("hex", "decimal"),
    );
    expect(r).toEqual({ smscId: "1000", state: "UNDELIV", err: "000" });
  });

  it("records an intermediate notification as such, even when it names a final state", () => {
    expect(read(pdu({ isIntermediate: true, esm_class: 0x08 }), dialect("hex"))).toMatchObject({
      state: "ENROUTE",
    });
  });

  it("says why a receipt is unreadable", () => {
    expect(readReceipt(pdu({ short_message: "hello" }), dialect("hex"))).toEqual({
      kind: "unreadable",
      reason: "no_id",
    });
    expect(readReceipt(pdu({ short_message: "id:zz stat:DELIVRD" }), dialect("hex"))).toEqual({
      kind: "unreadable",
      reason: "id_unreadable",
    });
    expect(readReceipt(pdu({ short_message: "id:42 sub:001" }), dialect("string"))).toEqual({
      kind: "unreadable",
      reason: "no_state",
    });
  });
});

describe("jobsToFetch", () => {
  const base = { room: 2_000, largestJobSize: 50, maxJobsPerFetch: 500 };
  it("fills the room at the mean job size", () => {
    expect(jobsToFetch({ ...base, meanJobSize: 50 })).toBe(40);
    expect(jobsToFetch({ ...base, meanJobSize: 10 })).toBe(160);
  });
  it("never lets jobs of the largest size put more than four times the room in one batch", () => {
    // Single sends (one message a job) would ask for 2,000 jobs: 160 bulk jobs at most (8,000 messages).
    expect(jobsToFetch({ ...base, meanJobSize: 1 })).toBe(160);
    expect(jobsToFetch({ ...base, room: 500, meanJobSize: 1 })).toBe(40);
  });
  it("takes at least one job and at most maxJobsPerFetch", () => {
    expect(jobsToFetch({ ...base, room: 10, meanJobSize: 50 })).toBe(1);
    expect(jobsToFetch({ ...base, room: 100_000, meanJobSize: 1 })).toBe(500);
  });
});

describe("refusals counted against a message (DISPATCH_MAX_REFUSALS)", () => {
  it("counts a refusal of the message, never the SMSC's own state or the session's", () => {
    const {
      ESME_RSUBMITFAIL,
      ESME_RUNKNOWNERR,
      ESME_RSYSERR,
      ESME_RINVBNDSTS,
      ESME_RTHROTTLED,
      ESME_RINVDSTADR,
    } = STATUS;
    expect([ESME_RSUBMITFAIL, ESME_RUNKNOWNERR].map(isPassingRefusal)).toEqual([true, true]);
    // A carrier's bad spell, the bind, throttling: the link's state. A permanent refusal fails at once.
    expect([ESME_RSYSERR, ESME_RINVBNDSTS, ESME_RTHROTTLED, ESME_RINVDSTADR].map(isPassingRefusal)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});
