/**
 * PDUs to and from bytes, by the tables of pdu.ts: the one codec for every PDU Shiri sends or
 * receives (docs/decisions/0008-smpp-codec.md). Reading is as forgiving as SMPP allows and no
 * more: a body may end at a field's boundary (an error answer often has none), and the fields
 * after it are absent; a response's last mandatory field may run to the end with no NUL; a field
 * that starts but does not fit (a C-octet string with no NUL within its maximum size or before the
 * end, an octet string or TLV longer than what is left, an integer TLV of the wrong size) is a
 * PduBodyError, which names the PDU's header so it can be answered (a request) or still settle
 * the request it answers (a response).
 */
import {
  COMMAND_NAMES,
  COMMANDS,
  type FieldSpec,
  type FieldValue,
  isResponse,
  type Pdu,
  TLV_TYPES,
  type Tlv,
  type TlvType,
} from "./pdu.ts";

/** command_length, command_id, command_status and sequence_number. */
export const HEADER_BYTES = 16;

/** A PDU whose header reads but whose body does not. */
export class PduBodyError extends Error {
  constructor(
    readonly header: Pdu,
    reason: string,
  ) {
    super(`${header.command} (sequence ${header.sequence_number}): ${reason}`);
    this.name = "PduBodyError";
  }
}

/** One whole PDU, command_length included (the wire has checked it against SMPP's bounds). */
export function decodePdu(bytes: Buffer): Pdu {
  if (bytes.length < HEADER_BYTES || bytes.readUInt32BE(0) !== bytes.length)
    throw new Error(`PDU of ${bytes.length} octets does not match its command_length`);
  const command_id = bytes.readUInt32BE(4);
  const pdu: Pdu = {
    command: COMMAND_NAMES.get(command_id) ?? "unknown",
    command_id,
    command_status: bytes.readUInt32BE(8),
    sequence_number: bytes.readUInt32BE(12),
    fields: {},
    tlvs: [],
  };
  const body = COMMANDS[pdu.command]?.body;
  if (!body) return pdu;
  let at = HEADER_BYTES;
  const response = isResponse(pdu);
  for (let i = 0; i < body.length; i++) {
    const field = body[i] as FieldSpec;
    if (at >= bytes.length) return pdu;
    const value = readField(bytes, at, field, response && i === body.length - 1);
    const next = fieldEnd;
    if (next > bytes.length) throw bodyError(pdu, `${field.name} runs past the end of the PDU`);
    if (value === null)
      throw bodyError(
        pdu,
        `${field.name} has no NUL ${field.max ? `within ${field.max} octets` : "before the end"}`,
      );
    pdu.fields[field.name] = value;
    at = next;
  }
  while (at < bytes.length) {
    if (at + 4 > bytes.length) throw bodyError(pdu, `${bytes.length - at} octets after the last TLV`);
    const tag = bytes.readUInt16BE(at);
    const length = bytes.readUInt16BE(at + 2);
    at += 4;
    if (at + length > bytes.length)
      throw bodyError(pdu, `TLV 0x${tag.toString(16)} runs past the end of the PDU`);
    const value = readTlv(bytes.subarray(at, at + length), TLV_TYPES.get(tag));
    if (value === null) throw bodyError(pdu, `TLV 0x${tag.toString(16)} does not hold its type`);
    pdu.tlvs.push({ tag, value });
    at += length;
  }
  return pdu;
}

/** Where the field readField read last ends (a variable, not a pair: this runs for every field). */
let fieldEnd = 0;

/** The error for a body that does not read, with the PDU's header alone. */
function bodyError(pdu: Pdu, reason: string): PduBodyError {
  return new PduBodyError({ ...pdu, fields: {}, tlvs: [] }, reason);
}

/**
 * A field's value, its end in fieldEnd; null for a C-octet string with no NUL in reach.
 * `mayRunToEnd`: the last mandatory field of a response, a C-octet string read to the end of the
 * PDU when its NUL is missing, as node-smpp read it: an SMSC writing a submit_sm_resp's message_id
 * so (not seen on a live link) must not have its ESME_ROK lost with the id (decision 0001).
 */
function readField(bytes: Buffer, at: number, field: FieldSpec, mayRunToEnd: boolean): FieldValue | null {
  switch (field.type) {
    case "int8":
      fieldEnd = at + 1;
      return bytes[at] as number;
    case "int16":
      fieldEnd = at + 2;
      return fieldEnd > bytes.length ? 0 : bytes.readUInt16BE(at);
    case "int32":
      fieldEnd = at + 4;
      return fieldEnd > bytes.length ? 0 : bytes.readUInt32BE(at);
    case "cstring": {
      const nul = bytes.indexOf(0, at);
      const end = nul < 0 && mayRunToEnd ? bytes.length : nul;
      fieldEnd = at;
      if (end < 0 || end - at >= (field.max ?? Number.POSITIVE_INFINITY)) return null;
      fieldEnd = nul < 0 ? end : end + 1;
      // node-smpp read C-octet strings as ASCII (the eighth bit cleared); Shiri reads them the same.
      return bytes.toString("ascii", at, end);
    }
    case "octets8": {
      fieldEnd = at + 1 + (bytes[at] as number);
      return Buffer.from(bytes.subarray(at + 1, Math.min(fieldEnd, bytes.length)));
    }
  }
}

/** A TLV's value by its type; an unknown tag's octets as they came; null when they do not fit. */
function readTlv(value: Buffer, type: TlvType | undefined): FieldValue | null {
  switch (type) {
    case "int8":
      return value.length === 1 ? (value[0] as number) : null;
    case "int16":
      return value.length === 2 ? value.readUInt16BE(0) : null;
    case "int32":
      return value.length === 4 ? value.readUInt32BE(0) : null;
    case "cstring": {
      const end = value.indexOf(0);
      return value.toString("ascii", 0, end < 0 ? value.length : end);
    }
    case "string":
      return value.toString("ascii");
    default:
      return Buffer.from(value);
  }
}

/**
 * The bytes of a PDU. A PDU with a non-zero command_status is its header alone, as node-smpp
 * wrote every error answer; absent fields are written as 0 or empty. Throws on an octet string
 * over 255 octets or an integer out of its range. One buffer, sized first, written once: this
 * runs for every submit and every answer.
 */
export function encodePdu(pdu: Pdu): Buffer {
  const body = pdu.command_status === 0 ? (COMMANDS[pdu.command]?.body ?? []) : [];
  const tlvs = pdu.command_status === 0 ? pdu.tlvs : [];
  let length = HEADER_BYTES;
  for (const field of body) length += fieldSize(field, pdu.fields[field.name]);
  const tlvValues: Buffer[] = [];
  for (const tlv of tlvs) tlvValues.push(tlvOctets(tlv));
  for (const value of tlvValues) length += 4 + value.length;
  const out = Buffer.allocUnsafe(length);
  out.writeUInt32BE(length, 0);
  out.writeUInt32BE(pdu.command_id >>> 0, 4);
  out.writeUInt32BE(pdu.command_status >>> 0, 8);
  out.writeUInt32BE(pdu.sequence_number >>> 0, 12);
  let at = HEADER_BYTES;
  for (const field of body) at = writeField(out, at, field, pdu.fields[field.name]);
  for (let i = 0; i < tlvs.length; i++) {
    const value = tlvValues[i] as Buffer;
    at = out.writeUInt16BE((tlvs[i] as Tlv).tag, at);
    at = out.writeUInt16BE(value.length, at);
    at += value.copy(out, at);
  }
  return out;
}

function fieldSize(field: FieldSpec, value: FieldValue | undefined): number {
  switch (field.type) {
    case "int8":
      return 1;
    case "int16":
      return 2;
    case "int32":
      return 4;
    case "cstring":
      // One octet a character (latin1), as node-smpp wrote them, and the NUL.
      return (typeof value === "string" ? value.length : 0) + 1;
    case "octets8": {
      const length = Buffer.isBuffer(value) ? value.length : 0;
      if (length > 255) throw new RangeError(`${field.name} of ${length} octets`);
      return 1 + length;
    }
  }
}

function writeField(out: Buffer, at: number, field: FieldSpec, value: FieldValue | undefined): number {
  switch (field.type) {
    case "int8":
      return out.writeUInt8(typeof value === "number" ? value : 0, at);
    case "int16":
      return out.writeUInt16BE(typeof value === "number" ? value : 0, at);
    case "int32":
      return out.writeUInt32BE(typeof value === "number" ? value : 0, at);
    case "cstring": {
      const end = at + (typeof value === "string" ? out.write(value, at, "latin1") : 0);
      out[end] = 0;
      return end + 1;
    }
    case "octets8": {
      const octets = Buffer.isBuffer(value) ? value : EMPTY;
      out[at] = octets.length;
      return at + 1 + octets.copy(out, at + 1);
    }
  }
}
const EMPTY = Buffer.alloc(0);

/** A C-octet string's octets, one a character as node-smpp wrote them, and its NUL. */
function withNul(text: string): Buffer {
  const out = Buffer.alloc(text.length + 1);
  out.write(text, "latin1");
  return out;
}

function tlvOctets({ tag, value }: Tlv): Buffer {
  if (Buffer.isBuffer(value)) return value;
  const type = TLV_TYPES.get(tag);
  if (typeof value === "string") return type === "cstring" ? withNul(value) : Buffer.from(value, "latin1");
  const size = type === "int16" ? 2 : type === "int32" ? 4 : 1;
  const out = Buffer.alloc(size);
  out.writeUIntBE(value, 0, size);
  return out;
}
