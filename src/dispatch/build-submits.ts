import type { SmppSettings } from "../../carriers/index.ts";
import { SMPP_DEFAULTS } from "../../carriers/smpp-defaults.ts";
import { toWireMsisdn } from "../domain/numbers.ts";
import { encodeGsm7, encodeUcs2, splitSegments } from "../domain/segments.ts";
import type { SubmitParams } from "../smpp/session.ts";

/** SMPP data_coding for UCS-2; GSM 03.38 is 0 or 1 per carrier (gsm_data_coding). */
const DATA_CODING_UCS2 = 0x08;
/** UDH information element 0x00: concatenated short message, 8-bit reference (GSM 03.40 9.2.3.24.1). */
const IEI_CONCAT_8BIT = 0x00;

/** What building the PDUs needs of a carrier's settings. */
export type SubmitDialect = Pick<
  SmppSettings,
  "gsm_data_coding" | "concatenation" | "numeric_source_addr_ton" | "numeric_source_addr_npi"
>;

export interface OutboundMessage {
  id: string;
  to: string;
  body: string;
  sender_id: string;
  /** When it expires: the carrier is given what is left of it at each submit, as the validity period. */
  expiresAt: Date;
}

export interface OutboundPart {
  partNo: number;
  params: SubmitParams;
}

/**
 * The submit_sm PDUs of one message in the carrier's dialect: one per segment, as concatenated
 * parts (UDH or SAR TLVs) when there are several. The concat reference comes from the message
 * id, so a part sent again after a retry still joins the parts sent before it: from its last,
 * random, bits, since its first are the time (UUIDv7), the same for every message of a day. A
 * handset joins parts by sender and reference, so two long messages to one handset must differ. An alphanumeric
 * sender keeps the session's TON/NPI; a numeric one gets the carrier's numeric TON/NPI.
 */
export function buildSubmits(
  message: OutboundMessage,
  dialect: SubmitDialect = SMPP_DEFAULTS,
): OutboundPart[] {
  const destination = toWireMsisdn(message.to);
  if (!destination) throw new Error(`message ${message.id} has no routable destination`);
  const { encoding, parts } = splitSegments(message.body);
  const encode = encoding === "gsm7" ? encodeGsm7 : encodeUcs2;
  const numericSender = /^\d+$/.test(message.sender_id);
  const total = parts.length;
  const concat = (seq: number): Partial<SubmitParams> => {
    if (total === 1) return {};
    if (dialect.concatenation === "sar")
      return { sar: { ref: Number.parseInt(message.id.slice(-4), 16), total, seq } };
    const ref = Number.parseInt(message.id.slice(-2), 16);
    return { udh: Buffer.from([0x05, IEI_CONCAT_8BIT, 0x03, ref, total, seq]) };
  };
  return parts.map((text, i) => {
    const params: SubmitParams = {
      source_addr: message.sender_id,
      destination_addr: destination,
      data_coding: encoding === "gsm7" ? dialect.gsm_data_coding : DATA_CODING_UCS2,
      short_message: encode(text),
      registered_delivery: 1,
      // What is left of it, as docs/api.md promises: a carrier given more could deliver the
      // message after it expired here (and its hold was released).
      validUntil: message.expiresAt,
      ...(numericSender
        ? {
            source_addr_ton: dialect.numeric_source_addr_ton,
            source_addr_npi: dialect.numeric_source_addr_npi,
          }
        : {}),
      ...concat(i + 1),
    };
    return { partNo: i + 1, params };
  });
}
