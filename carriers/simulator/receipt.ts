/**
 * Delivery receipts as the simulated SMSC writes them: the SMPP 3.4 Appendix B text plus the
 * receipted_message_id and message_state TLVs, and message ids rendered in each carrier's style.
 */
import { formatSmscId } from "../../src/domain/smsc-id.ts";
import type { SmscIdFormat } from "../types.ts";

export const RECEIPT_STATS = ["DELIVRD", "UNDELIV", "EXPIRED", "REJECTD"] as const;
export type ReceiptStat = (typeof RECEIPT_STATS)[number];

/**
 * Final state → message_state TLV value (SMPP 3.4 5.2.28) and the receipt's err field. The err
 * codes are the GSM MAP causes real SMSCs tend to report (1 unknown subscriber, 27 absent
 * subscriber, 11 teleservice not provisioned); only their being non-zero matters to Shiri.
 */
export const RECEIPT_OUTCOMES: Readonly<Record<ReceiptStat, { message_state: number; err: number }>> = {
  DELIVRD: { message_state: 2, err: 0 },
  EXPIRED: { message_state: 3, err: 27 },
  UNDELIV: { message_state: 5, err: 1 },
  REJECTD: { message_state: 8, err: 11 },
};

/** esm_class message type bits for "SMSC delivery receipt" (SMPP 3.4 5.2.12). */
export const ESM_CLASS_DELIVERY_RECEIPT = 0x04;

/** network_error_code TLV's network type for GSM (SMPP 3.4 5.3.2.31). */
const NETWORK_TYPE_GSM = 3;

/** How one SMSC writes an id: the same number can be hex in submit_sm_resp and decimal in receipts. */
export interface IdStyle {
  format: SmscIdFormat;
  upperCase?: boolean;
  /** Left-pad with zeros to this many characters. */
  padTo?: number;
}

export function formatId(value: bigint, style: IdStyle): string {
  return formatSmscId(value, style.format, { upperCase: style.upperCase, padTo: style.padTo });
}

/** YYMMDDhhmm in UTC, the Appendix B date form. */
export function receiptDate(at: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return (
    two(at.getUTCFullYear() % 100) +
    two(at.getUTCMonth() + 1) +
    two(at.getUTCDate()) +
    two(at.getUTCHours()) +
    two(at.getUTCMinutes())
  );
}

export interface ReceiptInput {
  /** The id as this carrier writes it in receipts. */
  id: string;
  stat: ReceiptStat;
  submittedAt: Date;
  doneAt: Date;
  /** The original message text; the receipt carries its first 20 characters. */
  text: string;
}

/** Keep the echoed text to characters every SMSC alphabet shares, as real SMSCs mostly do. */
function safeEcho(text: string): string {
  return text.slice(0, 20).replace(/[^A-Za-z0-9 .,!?'()+-]/g, "?");
}

export function receiptText(r: ReceiptInput): string {
  const { err } = RECEIPT_OUTCOMES[r.stat];
  const dlvrd = r.stat === "DELIVRD" ? "001" : "000";
  return (
    `id:${r.id} sub:001 dlvrd:${dlvrd} submit date:${receiptDate(r.submittedAt)} ` +
    `done date:${receiptDate(r.doneAt)} stat:${r.stat} err:${String(err).padStart(3, "0")} text:${safeEcho(r.text)}`
  );
}

/** The deliver_sm fields of a receipt (a type alias, so it passes as node-smpp PDU options). */
export type ReceiptPduFields = {
  source_addr_ton: number;
  source_addr_npi: number;
  source_addr: string;
  dest_addr_ton: number;
  dest_addr_npi: number;
  destination_addr: string;
  esm_class: number;
  data_coding: number;
  short_message: string;
  receipted_message_id: string;
  message_state: number;
  network_error_code?: Buffer;
};

export function receiptPdu(
  r: ReceiptInput & {
    source: { addr: string; ton: number; npi: number };
    destination: { addr: string; ton: number; npi: number };
  },
): ReceiptPduFields {
  const outcome = RECEIPT_OUTCOMES[r.stat];
  const fields: ReceiptPduFields = {
    // A receipt travels back: from the handset (the original destination) to the sender.
    source_addr_ton: r.destination.ton,
    source_addr_npi: r.destination.npi,
    source_addr: r.destination.addr,
    dest_addr_ton: r.source.ton,
    dest_addr_npi: r.source.npi,
    destination_addr: r.source.addr,
    esm_class: ESM_CLASS_DELIVERY_RECEIPT,
    data_coding: 0,
    short_message: receiptText(r),
    receipted_message_id: r.id,
    message_state: outcome.message_state,
  };
  if (outcome.err !== 0) {
    const code = Buffer.alloc(3);
    code.writeUInt8(NETWORK_TYPE_GSM, 0);
    code.writeUInt16BE(outcome.err, 1);
    fields.network_error_code = code;
  }
  return fields;
}
