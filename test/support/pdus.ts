import smpp, { type PduOptions } from "smpp";
import type { SmppAddresses, SubmitSmFields } from "../../src/smpp/submit-sm.ts";

/** A one-segment GSM submit as session.ts fills it. */
export const SUBMIT_FIELDS: SubmitSmFields = {
  source_addr_ton: 5,
  source_addr_npi: 0,
  source_addr: "SHIRI",
  dest_addr_ton: 1,
  dest_addr_npi: 1,
  destination_addr: "263771234567",
  registered_delivery: 1,
  data_coding: 0,
  short_message: Buffer.from("Mhoro, your code is 4821"),
};

/** A receipt's text in SMPP 3.4 Appendix B's layout. */
export const receiptText = (id: string | number) =>
  `id:${id} sub:001 dlvrd:001 submit date:2611251412 done date:2611251413 stat:DELIVRD err:000 text:Mhoro`;

/** A receipt's addresses: from the handset the message went to, to the sender id. */
export const RECEIPT_ADDRESSES: SmppAddresses = {
  source_addr_ton: 1,
  source_addr_npi: 1,
  source_addr: "263771234567",
  dest_addr_ton: 5,
  dest_addr_npi: 0,
  destination_addr: "SHIRI",
};

/** The bytes of a deliver_sm as node-smpp writes it: a final receipt unless `options` say otherwise. */
export function deliverSmBytes(options: PduOptions): Buffer {
  return new smpp.PDU("deliver_sm", {
    ...RECEIPT_ADDRESSES,
    esm_class: 0x04,
    data_coding: 0,
    sequence_number: 77,
    ...options,
  }).toBuffer();
}
