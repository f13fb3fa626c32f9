/**
 * Mobile-originated messages as the simulated SMSC sends them: a handset's text, in one of the
 * four encodings Shiri reads, in one deliver_sm or split into parts (UDH with an 8- or 16-bit
 * reference, or the sar_* TLVs), the parts in any order, over one bind or spread across the
 * link's binds, each sent more than once if asked (the SMSC repeating a PDU whose answer it
 * lost). Resolves with each deliver_sm's answer.
 */
import smpp, { type PduOptions, type Session } from "smpp";
import type { MoConcatenation, MoEncoding } from "../../src/domain/mobile-originated.ts";
import { chooseEncoding, encodeGsm7, encodeUcs2 } from "../../src/domain/segments.ts";

export interface MobileOriginated {
  /** The handset's number (source_addr), as the SMSC writes it. */
  from: string;
  /** The address written to (destination_addr): a short code or a long number. */
  to: string;
  text: string;
  /** Default: gsm7 when every character is in GSM 03.38, else ucs2. */
  encoding?: MoEncoding;
  /** How parts are marked (default udh8); used only when the text needs more than one part. */
  concatenation?: MoConcatenation;
  /**
   * Octets of text per part; default 134 (140 less a concatenation UDH). The octets are cut
   * exactly there, so a character may straddle two parts (an escape, a surrogate pair).
   */
  partOctets?: number;
  /** Part numbers (from 1) in the order they go; default 1..n. Leaving one out never sends it. */
  order?: number[];
  /** Part i goes over bound session i (mod their number) instead of all over the first. */
  acrossBinds?: boolean;
  /** Each part is sent this many times (default 1), each copy once the one before is answered. */
  copies?: number;
  /** The concatenation reference (default random). */
  reference?: number;
  source_addr_ton?: number;
  source_addr_npi?: number;
  dest_addr_ton?: number;
  dest_addr_npi?: number;
}

export interface MobileOriginatedResult {
  parts: number;
  /** Each deliver_sm sent: its part, the session it went over, its answer (null: none in time). */
  sent: { part: number; session: number; command_status: number | null }[];
}

const DATA_CODING: Readonly<Record<MoEncoding, number>> = { gsm7: 0, ascii: 1, latin1: 3, ucs2: 8 };
const ANSWER_TIMEOUT_MS = 10_000;

function octetsOf(text: string, encoding: MoEncoding): Buffer {
  switch (encoding) {
    case "gsm7":
      return encodeGsm7(text);
    case "ascii":
      return Buffer.from([...text].map((c) => (c.charCodeAt(0) < 0x80 ? c : "?")).join(""), "latin1");
    case "latin1":
      return Buffer.from([...text].map((c) => (c.charCodeAt(0) < 0x100 ? c : "?")).join(""), "latin1");
    case "ucs2":
      return encodeUcs2(text);
  }
}

function concatenationFields(how: MoConcatenation, ref: number, total: number, seq: number): PduOptions {
  if (how === "sar")
    return { sar_msg_ref_num: ref & 0xffff, sar_total_segments: total, sar_segment_seqnum: seq };
  const udh =
    how === "udh8"
      ? Buffer.from([0x05, 0x00, 0x03, ref & 0xff, total, seq])
      : Buffer.from([0x06, 0x08, 0x04, (ref >> 8) & 0xff, ref & 0xff, total, seq]);
  return { udh };
}

/** Sends the message over `sessions` (the simulator's bound ones); throws when there is none. */
export async function sendMobileOriginated(
  sessions: readonly Session[],
  mo: MobileOriginated,
): Promise<MobileOriginatedResult> {
  if (sessions.length === 0) throw new Error("no bound session to send a mobile-originated message over");
  const encoding = mo.encoding ?? (chooseEncoding(mo.text) === "gsm7" ? "gsm7" : "ucs2");
  const octets = octetsOf(mo.text, encoding);
  const size = mo.partOctets ?? 134;
  const chunks: Buffer[] = [];
  if (octets.length <= 140 && mo.partOctets === undefined) chunks.push(octets);
  else for (let at = 0; at < octets.length; at += size) chunks.push(octets.subarray(at, at + size));
  if (chunks.length === 0) chunks.push(Buffer.alloc(0));
  const total = chunks.length;
  const how = mo.concatenation ?? "udh8";
  const ref = mo.reference ?? Math.floor(Math.random() * (how === "udh8" ? 0x100 : 0x10000));
  const order = mo.order ?? chunks.map((_, i) => i + 1);
  type Sent = MobileOriginatedResult["sent"][number];
  const deliver = (session: Session, sessionNo: number, part: number, options: PduOptions) =>
    new Promise<Sent>((resolve) => {
      const timer = setTimeout(
        () => resolve({ part, session: sessionNo, command_status: null }),
        ANSWER_TIMEOUT_MS,
      );
      const sent = session.send(new smpp.PDU("deliver_sm", options), (answer) => {
        clearTimeout(timer);
        resolve({ part, session: sessionNo, command_status: answer.command_status });
      });
      if (!sent) {
        clearTimeout(timer);
        resolve({ part, session: sessionNo, command_status: null });
      }
    });
  const answers = order.map(async (part, i): Promise<Sent[]> => {
    const chunk = chunks[part - 1];
    if (!chunk) throw new Error(`part ${part} of ${total} does not exist`);
    const sessionNo = mo.acrossBinds ? i % sessions.length : 0;
    const session = sessions[sessionNo] as Session;
    const { udh, ...tlvs } = (total > 1 ? concatenationFields(how, ref, total, part) : {}) as PduOptions & {
      udh?: Buffer;
    };
    const options: PduOptions = {
      source_addr_ton: mo.source_addr_ton ?? 1,
      source_addr_npi: mo.source_addr_npi ?? 1,
      source_addr: mo.from,
      dest_addr_ton: mo.dest_addr_ton ?? 0,
      dest_addr_npi: mo.dest_addr_npi ?? 1,
      destination_addr: mo.to,
      esm_class: 0,
      data_coding: DATA_CODING[encoding],
      short_message: udh ? { udh, message: chunk } : chunk,
      ...tlvs,
    };
    const sent: Sent[] = [];
    for (let copy = 0; copy < (mo.copies ?? 1); copy++)
      sent.push(await deliver(session, sessionNo, part, options));
    return sent;
  });
  return { parts: total, sent: (await Promise.all(answers)).flat() };
}
