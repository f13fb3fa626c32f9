/**
 * PDUs to and from bytes, by the tables of pdu.ts: the one codec for every PDU Shiri sends or
 * receives (docs/decisions/0008-smpp-codec.md). Reading is as forgiving as SMPP allows and no
 * more: a body may end at a field's boundary (an error answer often has none), and the fields
 * after it are absent; a field that starts but does not fit (a C-octet string with no NUL within
 * its maximum size or before the end, an octet string or TLV longer than what is left, an integer
 * TLV of the wrong size) is a PduBodyError, which names the PDU's header so it can be answered.
 */
import {
  COMMAND_NAMES,
  COMMANDS,
  type FieldSpec,
  type FieldValue,
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
  const fail = (reason: string) => new PduBodyError({ ...pdu, fields: {}, tlvs: [] }, reason);
  let at = HEADER_BYTES;
  for (const field of body) {
    if (at >= bytes.length) return pdu;
    const [value, next] = readField(bytes, at, field);
    if (next > bytes.length) throw fail(`${field.name} runs past the end of the PDU`);
    if (value === null) throw fail(`${field.name} has no NUL within ${field.max} octets`);
    pdu.fields[field.name] = value;
    at = next;
  }
  while (at < bytes.length) {
    if (at + 4 > bytes.length) throw fail(`${bytes.length - at} octets after the last TLV`);
    const tag = bytes.readUInt16BE(at);
    const length = bytes.readUInt16BE(at + 2);
    at += 4;
    if (at + length > bytes.length) throw fail(`TLV 0x${tag.toString(16)} runs past the end of the PDU`);
    const value = readTlv(bytes.subarray(at, at + length), TLV_TYPES.get(tag));
    if (value === null) throw fail(`TLV 0x${tag.toString(16)} does not hold its type`);
    pdu.tlvs.push({ tag, value });
    at += length;
  }
  return pdu;
}

/** A field's value and where the next starts; null for a C-octet string with no NUL in reach. */
function readField(bytes: Buffer, at: number, field: FieldSpec): [FieldValue | null, number] {
  switch (field.type) {
    case "int8":
      return [bytes[at] as number, at + 1];
    case "int16":
      return at + 2 > bytes.length ? [0, at + 2] : [bytes.readUInt16BE(at), at + 2];
    case "int32":
      return at + 4 > bytes.length ? [0, at + 4] : [bytes.readUInt32BE(at), at + 4];
    case "cstring": {
      const end = bytes.indexOf(0, at);
      if (end < 0 || end - at >= (field.max ?? Number.POSITIVE_INFINITY)) return [null, at];
      // node-smpp read C-octet strings as ASCII (the eighth bit cleared); Shiri reads them the same.
      return [bytes.toString("ascii", at, end), end + 1];
    }
    case "octets8": {
      const length = bytes[at] as number;
      const end = at + 1 + length;
      return [Buffer.from(bytes.subarray(at + 1, Math.min(end, bytes.length))), end];
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
 * over 255 octets or an integer out of its range.
 */
export function encodePdu(pdu: Pdu): Buffer {
  const body = pdu.command_status === 0 ? (COMMANDS[pdu.command]?.body ?? []) : [];
  const tlvs = pdu.command_status === 0 ? pdu.tlvs : [];
  const values = body.map((field) => fieldOctets(field, pdu.fields[field.name]));
  const tlvValues = tlvs.map((tlv) => tlvOctets(tlv));
  let length = HEADER_BYTES;
  for (const value of values) length += typeof value === "number" ? 0 : value.length;
  for (const field of body) length += INT_SIZE[field.type] ?? 0;
  for (const value of tlvValues) length += 4 + value.length;
  const out = Buffer.allocUnsafe(length);
  out.writeUInt32BE(length, 0);
  out.writeUInt32BE(pdu.command_id >>> 0, 4);
  out.writeUInt32BE(pdu.command_status >>> 0, 8);
  out.writeUInt32BE(pdu.sequence_number >>> 0, 12);
  let at = HEADER_BYTES;
  body.forEach((field, i) => {
    const value = values[i] as number | Buffer;
    if (typeof value !== "number") at += value.copy(out, at);
    else if (field.type === "int8") at = out.writeUInt8(value, at);
    else if (field.type === "int16") at = out.writeUInt16BE(value, at);
    else at = out.writeUInt32BE(value, at);
  });
  tlvs.forEach((tlv, i) => {
    const value = tlvValues[i] as Buffer;
    at = out.writeUInt16BE(tlv.tag, at);
    at = out.writeUInt16BE(value.length, at);
    at += value.copy(out, at);
  });
  return out;
}

const INT_SIZE: Readonly<Partial<Record<string, number>>> = { int8: 1, int16: 2, int32: 4 };

/** An integer field's value (written in place), or a string field's octets with its NUL or length. */
function fieldOctets(field: FieldSpec, value: FieldValue | undefined): number | Buffer {
  switch (field.type) {
    case "int8":
    case "int16":
    case "int32":
      return typeof value === "number" ? value : 0;
    case "cstring":
      return withNul(typeof value === "string" ? value : "");
    case "octets8": {
      const octets = Buffer.isBuffer(value) ? value : Buffer.alloc(0);
      if (octets.length > 255) throw new RangeError(`${field.name} of ${octets.length} octets`);
      return Buffer.concat([Buffer.of(octets.length), octets]);
    }
  }
}

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
