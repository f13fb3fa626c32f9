/**
 * PDUs to and from bytes, with node-smpp's own results. node-smpp's codec is generic: every PDU
 * walks its fields and its prototype with `for … in`, and its GSM coder rebuilds a key list of its
 * table on every call, about 50 µs of CPU a message in all (bench/RESULTS.md, sixth pass). The PDUs
 * of every message (submit_sm, its answer, the receipt's deliver_sm and its answer) take a direct
 * path here that yields the same objects and bytes; anything else, and any deliver_sm off the
 * common shape (a UDH, a data_coding other than the SMSC default, a time field, a TLV beyond the
 * receipt's), goes through node-smpp itself. test/unit/pdu-codec.test.ts holds the two side by
 * side.
 */
import smpp, { type PDU } from "smpp";

/** command_length, command_id, command_status and sequence_number. */
export const HEADER_BYTES = 16;
const SUBMIT_SM = 0x00000004;
const SUBMIT_SM_RESP = 0x80000004;
const DELIVER_SM = 0x00000005;
const DELIVER_SM_RESP = 0x80000005;
/** esm_class's UDH indicator (SMPP 3.4 5.2.12). */
const UDHI = 0x40;
const ESC = 0x1b;

/** The receipt TLVs read here, by tag; any other sends the PDU to node-smpp. */
const RECEIPT_TLVS = new Map<
  number,
  { name: string; read: (pdu: Buffer, at: number, length: number) => unknown }
>([
  [0x001e, { name: "receipted_message_id", read: (pdu, at) => cstringAt(pdu, at) }],
  [0x0427, { name: "message_state", read: (pdu, at) => pdu.readUInt8(at) }],
  [0x0423, { name: "network_error_code", read: (pdu, at, length) => pdu.subarray(at, at + length) }],
  [0x0204, { name: "user_message_reference", read: (pdu, at) => pdu.readUInt16BE(at) }],
]);

/** A C-octet string as node-smpp reads it: up to the first NUL, as ASCII. */
function cstringAt(pdu: Buffer, at: number): string {
  let end = at;
  while (pdu[end]) end++;
  return pdu.toString("ascii", at, end);
}

/**
 * A PDU of node-smpp's class holding only the header of `bytes`: its methods (isResponse,
 * response) work on what is set on it.
 */
function pduWithHeader(bytes: Buffer, commandId: number, command: string): PDU {
  const pdu = Object.create(smpp.PDU.prototype) as PDU;
  pdu.command_length = bytes.readUInt32BE(0);
  pdu.command_id = commandId;
  pdu.command_status = bytes.readUInt32BE(8);
  pdu.sequence_number = bytes.readUInt32BE(12);
  pdu.command = command;
  return pdu;
}

/**
 * One whole PDU (command_length included) as node-smpp would make it. A deliver_sm that is not a
 * receipt also carries its user data's octets as they came (`user_data`): node-smpp decodes IA5 as
 * if it were GSM 03.38, and a character may straddle two parts of a concatenated message, so the
 * inbound stage decodes the joined octets itself.
 */
export function decodePdu(bytes: Buffer): PDU {
  const commandId = bytes.readUInt32BE(4);
  if (commandId === SUBMIT_SM_RESP) return decodeSubmitSmResp(bytes);
  if (commandId === DELIVER_SM) {
    const pdu = decodeDeliverSm(bytes) ?? new smpp.PDU(bytes);
    if (typeof pdu.esm_class === "number" && !isReceiptType(pdu.esm_class)) pdu.user_data = userDataOf(bytes);
    return pdu;
  }
  return new smpp.PDU(bytes);
}

/** esm_class bits 2–5: the message type (SMPP 3.4 5.2.12). */
const ESM_CLASS_TYPE_MASK = 0x3c;
/** SMSC delivery receipt (0x04), and the intermediate notifications: 0x20, and 0x08 (SME delivery acknowledgement) that some SMSCs use for it. */
const RECEIPT_TYPES: ReadonlySet<number> = new Set([0x04, 0x08, 0x20]);

/** Whether a deliver_sm's esm_class says it is a delivery receipt or notification, not a message. */
export function isReceiptType(esmClass: number): boolean {
  return RECEIPT_TYPES.has(esmClass & ESM_CLASS_TYPE_MASK);
}

const MESSAGE_PAYLOAD = 0x0424;

/**
 * A deliver_sm's user data as octets, its UDH included: short_message, or message_payload's
 * value when short_message is empty (SMPP 3.4 5.3.2.32). Empty when the PDU is cut short.
 */
export function userDataOf(bytes: Buffer): Buffer {
  const body = new BodyReader(bytes);
  body.cstring(); // service_type
  body.at += 2;
  body.cstring(); // source_addr
  body.at += 2;
  body.cstring(); // destination_addr
  body.at += 3; // esm_class, protocol_id, priority_flag
  body.cstring(); // schedule_delivery_time
  body.cstring(); // validity_period
  body.at += 4; // registered_delivery, replace_if_present_flag, data_coding, sm_default_msg_id
  const smLength = body.octet();
  if (smLength === null || body.at + smLength > bytes.length) return Buffer.alloc(0);
  if (smLength > 0) return Buffer.from(bytes.subarray(body.at, body.at + smLength));
  for (let at = body.at + smLength; at + 4 <= bytes.length; ) {
    const tag = bytes.readUInt16BE(at);
    const length = bytes.readUInt16BE(at + 2);
    if (at + 4 + length > bytes.length) break;
    if (tag === MESSAGE_PAYLOAD) return Buffer.from(bytes.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return Buffer.alloc(0);
}

function decodeSubmitSmResp(bytes: Buffer): PDU {
  const pdu = pduWithHeader(bytes, SUBMIT_SM_RESP, "submit_sm_resp");
  // node-smpp reads the body only when there is one (an error answer may come without).
  if (bytes.length > HEADER_BYTES) pdu.message_id = cstringAt(bytes, HEADER_BYTES);
  return pdu;
}

/** Reads a PDU's body field by field; null once a field would run past its end. */
class BodyReader {
  at = HEADER_BYTES;
  constructor(private readonly bytes: Buffer) {}

  cstring(): string | null {
    const value = cstringAt(this.bytes, this.at);
    this.at += value.length + 1;
    return this.at <= this.bytes.length ? value : null;
  }

  octet(): number | null {
    return this.at < this.bytes.length ? (this.bytes[this.at++] as number) : null;
  }
}

/** A receipt-shaped deliver_sm; null for any other, which node-smpp decodes. */
function decodeDeliverSm(bytes: Buffer): PDU | null {
  const body = new BodyReader(bytes);
  const pdu = pduWithHeader(bytes, DELIVER_SM, "deliver_sm");
  pdu.service_type = body.cstring();
  pdu.source_addr_ton = body.octet();
  pdu.source_addr_npi = body.octet();
  pdu.source_addr = body.cstring();
  pdu.dest_addr_ton = body.octet();
  pdu.dest_addr_npi = body.octet();
  pdu.destination_addr = body.cstring();
  const esmClass = body.octet();
  pdu.esm_class = esmClass;
  pdu.protocol_id = body.octet();
  pdu.priority_flag = body.octet();
  const scheduled = body.cstring();
  const validity = body.cstring();
  pdu.schedule_delivery_time = scheduled;
  pdu.validity_period = validity;
  pdu.registered_delivery = body.octet();
  pdu.replace_if_present_flag = body.octet();
  const dataCoding = body.octet();
  pdu.data_coding = dataCoding;
  pdu.sm_default_msg_id = body.octet();
  const smLength = body.octet();
  const length = bytes.length;
  if (smLength === null || body.at + smLength > length) return null;
  if (esmClass === null || (esmClass & UDHI) !== 0) return null;
  if (dataCoding === null || (dataCoding & 0x0f) !== 0) return null;
  // Times in relative or absolute form become Dates in node-smpp: rare in a receipt, and left to it.
  if (scheduled !== "" || validity !== "") return null;
  const tables = gsmTables();
  if (!tables) return null;
  pdu.short_message = { message: decodeGsm(tables, bytes, body.at, body.at + smLength) };
  let at = body.at + smLength;
  while (at + 4 <= length) {
    const tlv = RECEIPT_TLVS.get(bytes.readUInt16BE(at));
    const tlvLength = bytes.readUInt16BE(at + 2);
    if (!tlv || at + 4 + tlvLength > length) return null;
    pdu[tlv.name] = tlv.read(bytes, at + 4, tlvLength);
    at += 4 + tlvLength;
  }
  return pdu;
}

/**
 * node-smpp's decoding of the SMSC default alphabet (GSM 03.38, one character an octet), learnt
 * from node-smpp itself: the UTF-16 code of what each octet becomes alone, and of what ESC then
 * each octet becomes (-1: not an escape, ESC stays).
 */
interface GsmTables {
  single: Uint16Array;
  escaped: Int32Array;
}
/** Learnt on first use; null if node-smpp's decoding could not be learnt (node-smpp decodes then). */
let learnt: GsmTables | null | undefined;

function gsmTables(): GsmTables | null {
  if (learnt === undefined) {
    try {
      learnt = learnGsmTables();
    } catch {
      learnt = null;
    }
  }
  return learnt;
}

function learnGsmTables(): GsmTables {
  const decodeWithNodeSmpp = (octets: number[]): string => {
    const sm = Buffer.from(octets);
    const pdu = new smpp.PDU(
      new smpp.PDU("deliver_sm", { data_coding: 0, short_message: sm, sequence_number: 1 }).toBuffer(),
    );
    const decoded: unknown = pdu.short_message;
    if (typeof decoded !== "object" || decoded === null || !("message" in decoded))
      throw new Error("node-smpp did not decode a short_message");
    return String(decoded.message);
  };
  const codeOf = (character: string): number => {
    if (character.length !== 1)
      throw new Error(`node-smpp decoded one octet to ${JSON.stringify(character)}`);
    return character.charCodeAt(0);
  };
  const single = Uint16Array.from({ length: 256 }, (_, octet) => codeOf(decodeWithNodeSmpp([octet])));
  const escaped = Int32Array.from({ length: 256 }, (_, octet) => {
    const pair = decodeWithNodeSmpp([ESC, octet]);
    return pair === String.fromCharCode(single[ESC] as number, single[octet] as number) ? -1 : codeOf(pair);
  });
  return { single, escaped };
}

/** The decoded characters of one short_message (at most 255), as UTF-16LE. */
const characters = Buffer.alloc(512);

function decodeGsm({ single, escaped }: GsmTables, bytes: Buffer, from: number, to: number): string {
  let end = 0;
  for (let at = from; at < to; at++) {
    const octet = bytes[at] as number;
    let code = octet === ESC && at + 1 < to ? (escaped[bytes[at + 1] as number] as number) : -1;
    if (code >= 0) at++;
    else code = single[octet] as number;
    characters[end++] = code & 0xff;
    characters[end++] = code >> 8;
  }
  return characters.toString("utf16le", 0, end);
}

/** The source and destination of a submit_sm or deliver_sm, each with its TON and NPI. */
export interface SmppAddresses {
  source_addr_ton: number;
  source_addr_npi: number;
  source_addr: string;
  dest_addr_ton: number;
  dest_addr_npi: number;
  destination_addr: string;
}

/** The fields of a submit_sm as Shiri fills them (session.ts), and nothing else. */
export interface SubmitSmFields extends SmppAddresses {
  registered_delivery: number;
  data_coding: number;
  short_message: Buffer;
  /** User data header with its length octet: prepended to short_message, with UDHI set. */
  udh?: Buffer;
  /** Already in SMPP's time form (validityPeriod). */
  validity_period?: string;
  sar_msg_ref_num?: number;
  sar_total_segments?: number;
  sar_segment_seqnum?: number;
}

/**
 * The octets of a submit_sm besides its strings, user data and TLVs: service_type and
 * schedule_delivery_time (both empty), the source's and destination's TON and NPI, the NULs
 * ending the three strings Shiri sets, esm_class, protocol_id, priority_flag,
 * registered_delivery, replace_if_present_flag, data_coding, sm_default_msg_id and sm_length.
 */
const SUBMIT_SM_FIXED_OCTETS = 2 + 4 + 3 + 3 + 4 + 1;

/**
 * The bytes of a submit_sm, as node-smpp writes them. Throws where node-smpp would: more than 255
 * octets of user data, a field out of range.
 */
export function encodeSubmitSm(fields: SubmitSmFields, sequenceNumber: number): Buffer {
  const udh = fields.udh?.length ? fields.udh : null;
  const userData = udh ? Buffer.concat([udh, fields.short_message]) : fields.short_message;
  if (userData.length > 255) throw new RangeError(`short_message of ${userData.length} octets`);
  const source = Buffer.from(fields.source_addr, "latin1");
  const destination = Buffer.from(fields.destination_addr, "latin1");
  const validity = Buffer.from(fields.validity_period ?? "", "latin1");
  const tlvs: [tag: number, size: 1 | 2, value: number][] = [];
  if (fields.sar_msg_ref_num !== undefined) tlvs.push([0x020c, 2, fields.sar_msg_ref_num]);
  if (fields.sar_total_segments !== undefined) tlvs.push([0x020e, 1, fields.sar_total_segments]);
  if (fields.sar_segment_seqnum !== undefined) tlvs.push([0x020f, 1, fields.sar_segment_seqnum]);
  const tlvOctets = tlvs.reduce((sum, [, size]) => sum + 4 + size, 0);
  const length =
    HEADER_BYTES +
    SUBMIT_SM_FIXED_OCTETS +
    source.length +
    destination.length +
    validity.length +
    userData.length +
    tlvOctets;
  const out = Buffer.alloc(length);
  out.writeUInt32BE(length, 0);
  out.writeUInt32BE(SUBMIT_SM, 4);
  out.writeUInt32BE(0, 8);
  out.writeUInt32BE(sequenceNumber, 12);
  let at = HEADER_BYTES + 1; // service_type ""
  at = out.writeUInt8(fields.source_addr_ton, at);
  at = out.writeUInt8(fields.source_addr_npi, at);
  at += source.copy(out, at) + 1;
  at = out.writeUInt8(fields.dest_addr_ton, at);
  at = out.writeUInt8(fields.dest_addr_npi, at);
  at += destination.copy(out, at) + 1;
  at = out.writeUInt8(udh ? UDHI : 0, at); // esm_class
  at += 3; // protocol_id, priority_flag, schedule_delivery_time ""
  at += validity.copy(out, at) + 1;
  at = out.writeUInt8(fields.registered_delivery, at);
  at += 1; // replace_if_present_flag
  at = out.writeUInt8(fields.data_coding, at);
  at += 1; // sm_default_msg_id
  at = out.writeUInt8(userData.length, at);
  at += userData.copy(out, at);
  for (const [tag, size, value] of tlvs) {
    at = out.writeUInt16BE(tag, at);
    at = out.writeUInt16BE(size, at);
    at = size === 1 ? out.writeUInt8(value, at) : out.writeUInt16BE(value, at);
  }
  return out;
}

/** The bytes of a PDU made with node-smpp: an accepting deliver_sm_resp directly, the rest by node-smpp. */
export function encodePdu(pdu: PDU): Buffer {
  if (pdu.command !== "deliver_sm_resp" || pdu.command_status || pdu.message_id !== "") return pdu.toBuffer();
  const out = Buffer.alloc(HEADER_BYTES + 1); // the body: an empty message_id
  out.writeUInt32BE(out.length, 0);
  out.writeUInt32BE(DELIVER_SM_RESP, 4);
  out.writeUInt32BE(0, 8);
  out.writeUInt32BE(pdu.sequence_number, 12);
  return out;
}

const two = (n: number) => String(n).padStart(2, "0");

/**
 * A validity_period in SMPP's time form: seconds from submission as a relative time
 * ("YYMMDDhhmmss000R", capped at 99 days), a Date as node-smpp writes one (the absolute
 * "YYMMDDhhmmsst00+", in UTC).
 */
export function validityPeriod(validity: number | Date): string {
  if (typeof validity === "number") {
    const s = Math.min(Math.max(0, Math.floor(validity)), 99 * 86_400 - 1);
    const [d, h, m, sec] = [
      Math.floor(s / 86_400),
      Math.floor((s % 86_400) / 3600),
      Math.floor((s % 3600) / 60),
      s % 60,
    ];
    return `0000${two(d)}${two(h)}${two(m)}${two(sec)}000R`;
  }
  return (
    String(validity.getUTCFullYear()).slice(-2) +
    two(validity.getUTCMonth() + 1) +
    two(validity.getUTCDate()) +
    two(validity.getUTCHours()) +
    two(validity.getUTCMinutes()) +
    two(validity.getUTCSeconds()) +
    String(validity.getUTCMilliseconds()).padStart(3, "0").slice(0, 1) +
    "00+"
  );
}
