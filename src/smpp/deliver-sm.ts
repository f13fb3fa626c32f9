/**
 * A deliver_sm as Shiri reads it: a receipt, an intermediate notification or a handset's message,
 * from the PDU pdu-codec.ts decoded.
 */
import { decodeText, encodingOf } from "./data-coding.ts";
import { numberField, type Pdu, stringField, TLV_TAGS, tlvOfTag } from "./pdu.ts";
import type { SmppAddresses } from "./submit-sm.ts";

export interface DeliverSmTlvs {
  receipted_message_id?: string;
  message_state?: number;
  network_error_code?: Buffer;
  user_message_reference?: number;
  /** Concatenation by TLVs (SMPP 3.4 5.3.2.22–24): the message's reference, its parts, this part. */
  sar_msg_ref_num?: number;
  sar_total_segments?: number;
  sar_segment_seqnum?: number;
}

export interface DeliverSm extends SmppAddresses {
  service_type: string;
  esm_class: number;
  data_coding: number;
  /** The user data's text after the UDH, decoded by data_coding (data-coding.ts). */
  short_message: string;
  /** UDH information elements ([IEI, length, ...data]) when esm_class has UDHI. */
  udh: Buffer[];
  /**
   * Not a receipt: the user data's octets as they came, after the UDH (short_message's, else
   * message_payload's), for the inbound stage to decode with its parts joined, since a character
   * may straddle two parts.
   */
  user_data?: Buffer;
  /**
   * A delivery receipt: esm_class's message type says so, final (0x04) or intermediate (see
   * isIntermediate), or it is the default type with the TLVs only receipts carry (isReceiptByTlvs).
   */
  isReceipt: boolean;
  /**
   * An intermediate delivery notification: SMPP 3.4's 0x20, or 0x08 (SME delivery
   * acknowledgement), which some SMSCs use for it. It never ends a message.
   */
  isIntermediate: boolean;
  tlvs: DeliverSmTlvs;
}

/**
 * Thrown by a deliver_sm handler that does not take this PDU, on purpose: the session answers it
 * ESME_RX_T_APPN, as for any throw, so the SMSC delivers it again (to another bind, it may be),
 * and logs it at debug rather than as a failure.
 */
export class DeliverLater extends Error {}

/** esm_class bits 2–5: the message type (SMPP 3.4 5.2.12). */
const ESM_CLASS_TYPE_MASK = 0x3c;
/** SMSC delivery receipt (0x04), and the intermediate notifications: 0x20, and 0x08 (SME delivery acknowledgement) that some SMSCs use for it. */
const RECEIPT_TYPES: ReadonlySet<number> = new Set([0x04, 0x08, 0x20]);
const INTERMEDIATE_TYPES: ReadonlySet<number> = new Set([0x08, 0x20]);
/** esm_class's UDH indicator. */
const UDHI = 0x40;

/** Whether a deliver_sm's esm_class says it is a delivery receipt or notification, not a message. */
export function isReceiptType(esmClass: number): boolean {
  return RECEIPT_TYPES.has(esmClass & ESM_CLASS_TYPE_MASK);
}

/**
 * A deliver_sm of the default message type (esm_class type 0) that carries receipted_message_id
 * and message_state: TLVs SMPP 3.4 defines for receipts only (5.3.2.12, 5.3.2.35), which some
 * SMSCs send with esm_class 0. Both are asked for: a handset can write a text that looks like a
 * receipt, not the TLVs, so a text alone never makes a receipt.
 */
function isReceiptByTlvs(esmClass: number, tlvs: DeliverSmTlvs): boolean {
  return (
    (esmClass & ESM_CLASS_TYPE_MASK) === 0 &&
    tlvs.receipted_message_id !== undefined &&
    tlvs.message_state !== undefined
  );
}

const TLV_KINDS = {
  receipted_message_id: "string",
  message_state: "number",
  network_error_code: "buffer",
  user_message_reference: "number",
  sar_msg_ref_num: "number",
  sar_total_segments: "number",
  sar_segment_seqnum: "number",
} as const;

const TLVS_READ = Object.entries(TLV_KINDS).map(([name, kind]) => [name, kind, TLV_TAGS.get(name)] as const);

/** The TLVs Shiri reads, each when present with its type (the first of a tag repeated). */
function tlvsOf(pdu: Pdu): DeliverSmTlvs {
  const tlvs: Record<string, unknown> = {};
  for (const [name, kind, tag] of TLVS_READ) {
    const value = tag === undefined ? undefined : tlvOfTag(pdu, tag);
    if (kind === "buffer" ? Buffer.isBuffer(value) : typeof value === kind) tlvs[name] = value;
  }
  return tlvs as DeliverSmTlvs;
}

/**
 * A UDH's information elements ([IEI, length, ...data]), from the UDH with its length octet; an
 * element claiming more than is left keeps what there is.
 */
function informationElements(udh: Buffer): Buffer[] {
  const elements: Buffer[] = [];
  for (let at = 1; at < udh.length; ) {
    const end = at + 2 + (udh[at + 1] ?? 0);
    elements.push(Buffer.from(udh.subarray(at, Math.min(end, udh.length))));
    at = end;
  }
  return elements;
}

/** The user data: short_message's octets, or message_payload's when short_message is empty (SMPP 3.4 5.3.2.32). */
function userDataOf(pdu: Pdu): Buffer {
  const short = pdu.fields.short_message;
  if (Buffer.isBuffer(short) && short.length > 0) return short;
  const payload = tlvOfTag(pdu, MESSAGE_PAYLOAD);
  return Buffer.isBuffer(payload) ? payload : Buffer.alloc(0);
}
const MESSAGE_PAYLOAD = 0x0424;

/** A deliver_sm as Shiri reads it. */
export function toDeliverSm(pdu: Pdu): DeliverSm {
  const esm_class = numberField(pdu, "esm_class");
  const data_coding = numberField(pdu, "data_coding");
  const octets = userDataOf(pdu);
  // With UDHI, the user data opens with the UDH, its first octet the UDH's length.
  const udhLength = (esm_class & UDHI) !== 0 && octets.length > 0 ? 1 + (octets[0] as number) : 0;
  const text = octets.subarray(Math.min(udhLength, octets.length));
  const tlvs = tlvsOf(pdu);
  const isReceipt = isReceiptType(esm_class) || isReceiptByTlvs(esm_class, tlvs);
  return {
    service_type: stringField(pdu, "service_type"),
    source_addr_ton: numberField(pdu, "source_addr_ton"),
    source_addr_npi: numberField(pdu, "source_addr_npi"),
    source_addr: stringField(pdu, "source_addr"),
    dest_addr_ton: numberField(pdu, "dest_addr_ton"),
    dest_addr_npi: numberField(pdu, "dest_addr_npi"),
    destination_addr: stringField(pdu, "destination_addr"),
    esm_class,
    data_coding,
    short_message: decodeText(text, encodingOf(data_coding)),
    udh: udhLength > 0 ? informationElements(octets.subarray(0, udhLength)) : [],
    ...(isReceipt ? {} : { user_data: Buffer.from(text) }),
    isReceipt,
    isIntermediate: INTERMEDIATE_TYPES.has(esm_class & ESM_CLASS_TYPE_MASK),
    tlvs,
  };
}
