/**
 * Delivery receipts as the simulated SMSC writes them: the SMPP 3.4 Appendix B text plus the
 * receipted_message_id and message_state TLVs, and message ids rendered in each carrier's style.
 */
import { createHash } from "node:crypto";
import { formatSmscId } from "../../src/domain/smsc-id.ts";

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
/** esm_class 0x08 (SME delivery acknowledgement), which some SMSCs send as an intermediate notification. */
export const ESM_CLASS_INTERMEDIATE = 0x08;
/** message_state for the intermediate notifications the simulator can send. */
const INTERMEDIATE_STATES = { ENROUTE: 1, ACCEPTD: 6 } as const;
export type IntermediateStat = keyof typeof INTERMEDIATE_STATES;

/** network_error_code TLV's network type for GSM (SMPP 3.4 5.3.2.31). */
const NETWORK_TYPE_GSM = 3;

/**
 * How one SMSC writes an id: the same number can be hex in submit_sm_resp and decimal in receipts;
 * other SMSCs use opaque strings (a UUID, 64 hex characters of a hash, base36).
 */
export interface IdStyle {
  format: "hex" | "decimal" | "uuid" | "hex64" | "base36";
  upperCase?: boolean;
  /** Left-pad with zeros to this many characters. */
  padTo?: number;
}

/** The id for the simulator's counter value, in the style: the same value gives the same id. */
export function formatId(value: bigint, style: IdStyle): string {
  const cased = (id: string) => (style.upperCase ? id.toUpperCase() : id);
  const hash = () => createHash("sha256").update(`sim-id:${value}`).digest("hex");
  switch (style.format) {
    case "hex":
    case "decimal":
      return formatSmscId(value, style.format, { upperCase: style.upperCase, padTo: style.padTo });
    case "hex64":
      return cased(hash());
    case "base36":
      return cased(value.toString(36).padStart(style.padTo ?? 0, "0"));
    case "uuid": {
      const h = hash();
      // A version-4-shaped UUID (RFC 9562 layout), derived from the value so it is reproducible.
      return cased(
        `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`,
      );
    }
  }
}

/** Which fields a receipt carries and how it writes them. */
export interface ReceiptShape {
  /** receipted_message_id and message_state (and network_error_code) TLVs. */
  tlvs: boolean;
  /** Where the Appendix B text goes, if anywhere. */
  text: "short_message" | "message_payload" | "none";
  lowerCaseStat: boolean;
  /** Intermediate notifications sent before the final receipt. */
  intermediate: readonly IntermediateStat[];
  /** One receipt per message, for its first or last segment's id; null = one per segment. */
  perMessage: "first" | "last" | null;
  /**
   * Whose style receipted_message_id writes the id in: the submit_sm_resp's, as SMPP 3.4
   * (5.3.2.12) says, or the receipt text's, as several gateways do (decimal throughout, say).
   */
  tlvId: "answer" | "receipt";
}

export const DEFAULT_RECEIPT_SHAPE: Readonly<ReceiptShape> = {
  tlvs: true,
  text: "short_message",
  lowerCaseStat: false,
  intermediate: [],
  perMessage: null,
  tlvId: "answer",
};

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
  /** The id as this carrier writes it in receipt texts. */
  id: string;
  /** The id as written in submit_sm_resp, which receipted_message_id repeats unless `tlvId` says otherwise. */
  submitId?: string;
  stat: ReceiptStat | IntermediateStat;
  submittedAt: Date;
  doneAt: Date;
  /** The original message text; the receipt carries its first 20 characters. */
  text: string;
}

/** Keep the echoed text to characters every SMSC alphabet shares, as real SMSCs mostly do. */
function safeEcho(text: string): string {
  return text.slice(0, 20).replace(/[^A-Za-z0-9 .,!?'()+-]/g, "?");
}

function errOf(stat: ReceiptStat | IntermediateStat): number {
  return stat === "ENROUTE" || stat === "ACCEPTD" ? 0 : RECEIPT_OUTCOMES[stat].err;
}

export function receiptText(r: ReceiptInput, opts: { lowerCaseStat?: boolean } = {}): string {
  const dlvrd = r.stat === "DELIVRD" ? "001" : "000";
  const stat = opts.lowerCaseStat ? r.stat.toLowerCase() : r.stat;
  return (
    `id:${r.id} sub:001 dlvrd:${dlvrd} submit date:${receiptDate(r.submittedAt)} ` +
    `done date:${receiptDate(r.doneAt)} stat:${stat} err:${String(errOf(r.stat)).padStart(3, "0")} text:${safeEcho(r.text)}`
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
  message_payload?: string;
  receipted_message_id?: string;
  message_state?: number;
  network_error_code?: Buffer;
};

export function receiptPdu(
  r: ReceiptInput & {
    source: { addr: string; ton: number; npi: number };
    destination: { addr: string; ton: number; npi: number };
  },
  shape: ReceiptShape = DEFAULT_RECEIPT_SHAPE,
): ReceiptPduFields {
  const stat = r.stat;
  const intermediate = stat === "ENROUTE" || stat === "ACCEPTD";
  const message_state =
    stat === "ENROUTE" || stat === "ACCEPTD"
      ? INTERMEDIATE_STATES[stat]
      : RECEIPT_OUTCOMES[stat].message_state;
  const err = errOf(r.stat);
  const text = shape.text === "none" ? "" : receiptText(r, { lowerCaseStat: shape.lowerCaseStat });
  const fields: ReceiptPduFields = {
    // A receipt travels back: from the handset (the original destination) to the sender.
    source_addr_ton: r.destination.ton,
    source_addr_npi: r.destination.npi,
    source_addr: r.destination.addr,
    dest_addr_ton: r.source.ton,
    dest_addr_npi: r.source.npi,
    destination_addr: r.source.addr,
    esm_class: intermediate ? ESM_CLASS_INTERMEDIATE : ESM_CLASS_DELIVERY_RECEIPT,
    data_coding: 0,
    short_message: shape.text === "short_message" ? text : "",
  };
  if (shape.text === "message_payload") fields.message_payload = text;
  if (!shape.tlvs) return fields;
  fields.receipted_message_id = shape.tlvId === "answer" ? (r.submitId ?? r.id) : r.id;
  fields.message_state = message_state;
  if (err !== 0) {
    const code = Buffer.alloc(3);
    code.writeUInt8(NETWORK_TYPE_GSM, 0);
    code.writeUInt16BE(err, 1);
    fields.network_error_code = code;
  }
  return fields;
}
