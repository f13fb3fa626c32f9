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

/**
 * The bytes of a deliver_sm that is not a receipt, its text all in a message_payload TLV of
 * `payloadOctets` octets of "a": SMPP 3.4 lets it hold up to 65,535.
 */
export function payloadMoBytes(sequence: number, source: string, payloadOctets: number): Buffer {
  const body = Buffer.concat([
    Buffer.from([0]), // service_type
    Buffer.from([1, 1]), // source_addr_ton, source_addr_npi
    Buffer.from(`${source}\0`, "ascii"),
    Buffer.from([5, 0]), // dest_addr_ton, dest_addr_npi
    Buffer.from("SHIRI\0", "ascii"),
    Buffer.from([0, 0, 0]), // esm_class, protocol_id, priority_flag
    Buffer.from([0, 0]), // schedule_delivery_time, validity_period
    Buffer.from([0, 0, 0, 0, 0]), // registered_delivery, replace_if_present, data_coding, sm_default_msg_id, sm_length
  ]);
  const tlv = Buffer.alloc(4);
  tlv.writeUInt16BE(0x0424, 0); // message_payload
  tlv.writeUInt16BE(payloadOctets, 2);
  const header = Buffer.alloc(16);
  header.writeUInt32BE(16 + body.length + 4 + payloadOctets, 0);
  header.writeUInt32BE(0x00000005, 4); // deliver_sm
  header.writeUInt32BE(sequence, 12);
  return Buffer.concat([header, body, tlv, Buffer.alloc(payloadOctets, 0x61)]);
}
