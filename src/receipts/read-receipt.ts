import type { SmscIdFormat } from "../../carriers/index.ts";
import { canonicalSmscId } from "../domain/smsc-id.ts";
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

/** States after which the carrier sends nothing more about the message. */
export const FINAL_STATES: ReadonlySet<string> = new Set([
  "DELIVRD",
  "EXPIRED",
  "DELETED",
  "UNDELIV",
  "UNKNOWN",
  "REJECTD",
]);

export interface Receipt {
  /** Canonical SMSC id: the same value whatever the carrier's format, case or padding. */
  smscId: string;
  state: string;
}

/**
 * A delivery receipt's id and state. The TLVs win over the text when both are present: they
 * are typed, while the text format varies between carriers. Null when it is not a receipt or
 * carries no usable id or state.
 */
export function readReceipt(pdu: DeliverSm, idFormat: SmscIdFormat): Receipt | null {
  if (!pdu.isReceipt) return null;
  const text = parseReceiptText(pdu.short_message);
  const rawId = pdu.tlvs.receipted_message_id ?? text?.id ?? null;
  const state =
    (pdu.tlvs.message_state !== undefined ? MESSAGE_STATE[pdu.tlvs.message_state] : undefined) ??
    text?.stat ??
    null;
  if (rawId === null || state === null) return null;
  const smscId = canonicalSmscId(rawId, idFormat);
  return smscId === null ? null : { smscId, state };
}
