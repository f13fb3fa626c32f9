/**
 * What a handset's message says, from the octets of its parts: where a part sits in a
 * concatenated message, and the text of the joined octets in the part's data_coding.
 */
import type { DeliverSmTlvs } from "../smpp/session.ts";

// The text of the joined octets: decodeText in src/smpp/data-coding.ts, which receipts read with too.

/** A part of a concatenated message: its message's reference, how many parts, which one (from 1). */
export interface Concatenation {
  ref: number;
  total: number;
  seq: number;
}

/** UDH information elements of concatenation (3GPP TS 23.040 9.2.3.24.1 and .8). */
const IEI_CONCAT_8BIT = 0x00;
const IEI_CONCAT_16BIT = 0x08;

/**
 * Where a part sits, from its UDH (8- or 16-bit reference) or else the sar_* TLVs; null for a
 * message of one part. A header that numbers the part outside 1..total is not believed: the
 * octets are taken as a message of their own rather than waiting for parts that cannot come.
 */
export function concatenationOf(udh: readonly Buffer[], tlvs: DeliverSmTlvs): Concatenation | null {
  let found: Concatenation | null = null;
  for (const ie of udh) {
    if (ie[0] === IEI_CONCAT_8BIT && ie[1] === 3 && ie.length >= 5)
      found = { ref: ie[2] as number, total: ie[3] as number, seq: ie[4] as number };
    else if (ie[0] === IEI_CONCAT_16BIT && ie[1] === 4 && ie.length >= 6)
      found = { ref: ie.readUInt16BE(2), total: ie[4] as number, seq: ie[5] as number };
  }
  const { sar_msg_ref_num: ref, sar_total_segments: total, sar_segment_seqnum: seq } = tlvs;
  if (!found && ref !== undefined && total !== undefined && seq !== undefined) found = { ref, total, seq };
  if (!found || found.total < 2 || found.seq < 1 || found.seq > found.total) return null;
  return found;
}
