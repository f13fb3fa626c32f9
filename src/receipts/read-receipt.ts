import type { SmppSettings } from "../../carriers/index.ts";
import { FINAL_STATES } from "../domain/receipt-states.ts";
import { type IdRefusal, MAX_STORED_ID_LENGTH, readSmscId } from "../domain/smsc-id.ts";
import { parseReceiptText } from "../smpp/receipt-text.ts";
import type { DeliverSm } from "../smpp/session.ts";

/** SMPP 3.4 message_state TLV values (5.2.28) → the receipt text's state names. */
const MESSAGE_STATE: Readonly<Record<number, string>> = {
  1: "ENROUTE",
  2: "DELIVRD",
  3: "EXPIRED",
  4: "DELETED",
  5: "UNDELIV",
  6: "ACCEPTD",
  7: "UNKNOWN",
  8: "REJECTD",
};

/** The state an intermediate notification (esm_class 0x08) is recorded as, whatever it says. */
const INTERMEDIATE = "ENROUTE";

export interface Receipt {
  /**
   * The SMSC id as the receipt wrote it (verbatim, bounded), or the decimal value for a numeric
   * format; once matched another way, the id its segment was recorded under.
   */
  smscId: string;
  /** DELIVRD, UNDELIV, … or an intermediate state (ENROUTE, ACCEPTD) that never ends a message. */
  state: string;
  /** The `err:` code exactly as the carrier wrote it, for non-delivered states; null when absent. */
  err?: string | null;
  /** "message": the receipt stands for every segment of the message its id belongs to. */
  scope?: "segment" | "message";
  /**
   * The earliest acceptance a segment may have to be this receipt's: the receipt's arrival less
   * the message validity. An id the carrier reuses later never matches a months-old segment.
   */
  submittedAfter?: Date;
  /** When it first arrived, for a receipt kept aside and tried again (its grace runs from then). */
  receivedAt?: Date;
}

/** What the receipt reader needs of a carrier's settings. */
export type ReceiptDialect = Pick<SmppSettings, "id_format_submit" | "id_format_receipt" | "receipt_scope">;

export type ReceiptReading =
  | { kind: "receipt"; receipt: Receipt }
  | { kind: "unreadable"; reason: "no_id" | "no_state" | `id_${IdRefusal}` };

/** Slack past the validity for a late EXPIRED receipt. */
const VALIDITY_SLACK_MS = 3_600_000;

/**
 * A delivery receipt's id, state and error code, read in the carrier's dialect. The TLVs win over
 * the text when both are present: they are typed, while the text varies between carriers. An
 * opaque id ("auto", "string") is kept as written, bounded like a recorded one; with a numeric
 * override, receipted_message_id is read in the submit format (it repeats the submit_sm_resp id,
 * SMPP 3.4 5.3.2.12) and the text's `id:` in the receipt format. Call only for pdu.isReceipt.
 */
export function readReceipt(
  pdu: DeliverSm,
  dialect: ReceiptDialect,
  opts: { validityHours?: number; now?: Date } = {},
): ReceiptReading {
  const text = parseReceiptText(pdu.short_message);
  // An empty TLV is a carrier that fills the text instead: whichever holds the id is read.
  const tlvId = pdu.tlvs.receipted_message_id || undefined;
  const rawId = tlvId ?? text?.id ?? null;
  if (rawId === null) return { kind: "unreadable", reason: "no_id" };
  const format = tlvId !== undefined ? dialect.id_format_submit : dialect.id_format_receipt;
  const numeric = format === "hex" || format === "decimal";
  const id = numeric ? readSmscId(rawId, format) : opaqueId(rawId);
  if (!id.ok) return { kind: "unreadable", reason: `id_${id.reason}` };
  const written =
    (pdu.tlvs.message_state !== undefined ? MESSAGE_STATE[pdu.tlvs.message_state] : undefined) ??
    text?.stat ??
    null;
  if (written === null) return { kind: "unreadable", reason: "no_state" };
  const state = pdu.isIntermediate && FINAL_STATES.has(written) ? INTERMEDIATE : written;
  const receipt: Receipt = {
    smscId: id.id,
    state,
    err: state === "DELIVRD" ? null : (text?.err ?? networkErrorCode(pdu.tlvs.network_error_code)),
    scope: dialect.receipt_scope,
  };
  if (opts.validityHours !== undefined) {
    const now = opts.now ?? new Date();
    receipt.submittedAfter = new Date(now.getTime() - opts.validityHours * 3_600_000 - VALIDITY_SLACK_MS);
  }
  return { kind: "receipt", receipt };
}

/** An opaque id as a recorded segment's is kept: verbatim and bounded; an empty one names nothing. */
function opaqueId(raw: string): { ok: true; id: string } | { ok: false; reason: IdRefusal } {
  return raw.length === 0
    ? { ok: false, reason: "empty" }
    : { ok: true, id: raw.slice(0, MAX_STORED_ID_LENGTH) };
}

/** network_error_code (5.3.2.31): a network type octet, then a 2-octet code; written as Appendix B's 3 digits. */
function networkErrorCode(tlv: Buffer | undefined): string | null {
  if (!tlv || tlv.length < 3) return null;
  return String(tlv.readUInt16BE(1)).padStart(3, "0");
}
