import { toWireMsisdn } from "../domain/numbers.ts";
import { type Encoding, encodeGsm7, encodeUcs2, splitSegments } from "../domain/segments.ts";
import type { SubmitParams } from "../smpp/session.ts";

/** SMPP data_coding per encoding: 0 = SMSC default alphabet (GSM 03.38), 8 = UCS-2. */
const DATA_CODING: Readonly<Record<Encoding, number>> = { gsm7: 0x00, ucs2: 0x08 };
/** UDH information element 0x00: concatenated short message, 8-bit reference (GSM 03.40 9.2.3.24.1). */
const IEI_CONCAT_8BIT = 0x00;

export interface OutboundMessage {
  id: string;
  to: string;
  body: string;
  sender_id: string;
  /** Seconds the carrier may keep trying; sent as the validity period. */
  validitySeconds: number;
}

export interface OutboundPart {
  partNo: number;
  params: SubmitParams;
}

/**
 * The submit_sm PDUs of one message: one per segment, as concatenated parts when there are
 * several. The concat reference comes from the message id, so a part sent again after a
 * retry still joins the parts sent before it.
 */
export function buildSubmits(message: OutboundMessage): OutboundPart[] {
  const destination = toWireMsisdn(message.to);
  if (!destination) throw new Error(`message ${message.id} has no routable destination`);
  const { encoding, parts } = splitSegments(message.body);
  const encode = encoding === "gsm7" ? encodeGsm7 : encodeUcs2;
  const numericSender = /^\d+$/.test(message.sender_id);
  const ref = Number.parseInt(message.id.slice(0, 2), 16);
  return parts.map((text, i) => {
    const params: SubmitParams = {
      source_addr: message.sender_id,
      destination_addr: destination,
      data_coding: DATA_CODING[encoding],
      short_message: encode(text),
      registered_delivery: 1,
      validity: Math.max(60, Math.floor(message.validitySeconds)),
      // A numeric sender is a number (international, E.164); otherwise the carrier's alphanumeric TON/NPI.
      ...(numericSender ? { source_addr_ton: 1, source_addr_npi: 1 } : {}),
      ...(parts.length > 1
        ? { udh: Buffer.from([0x05, IEI_CONCAT_8BIT, 0x03, ref, parts.length, i + 1]) }
        : {}),
    };
    return { partNo: i + 1, params };
  });
}
