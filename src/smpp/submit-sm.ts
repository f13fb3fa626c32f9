/**
 * A submit_sm as Shiri fills it (session.ts), as a PDU for pdu-codec.ts to write.
 */
import { type FieldValue, type Pdu, request, TLV_TAGS, type Tlv } from "./pdu.ts";

/** esm_class's UDH indicator (SMPP 3.4 5.2.12). */
const UDHI = 0x40;

/** The source and destination of a submit_sm or deliver_sm, each with its TON and NPI. */
export interface SmppAddresses {
  source_addr_ton: number;
  source_addr_npi: number;
  source_addr: string;
  dest_addr_ton: number;
  dest_addr_npi: number;
  destination_addr: string;
}

/** The fields of a submit_sm as Shiri fills them, and nothing else. */
export interface SubmitSmFields extends SmppAddresses {
  registered_delivery: number;
  data_coding: number;
  short_message: Buffer;
  /** User data header with its length octet: prepended to short_message, with UDHI set. */
  udh?: Buffer;
  /** Already in SMPP's time form (validityPeriod). */
  validity_period?: string;
  sar_msg_ref_num?: number;
  sar_total_segments?: number;
  sar_segment_seqnum?: number;
}

const SAR_TLVS = ["sar_msg_ref_num", "sar_total_segments", "sar_segment_seqnum"] as const;

/** The submit_sm request of these fields: the UDH before the user data, the sar_* TLVs in order. */
export function submitSm(fields: SubmitSmFields): Pdu {
  const udh = fields.udh?.length ? fields.udh : null;
  const body: Record<string, FieldValue> = {
    source_addr_ton: fields.source_addr_ton,
    source_addr_npi: fields.source_addr_npi,
    source_addr: fields.source_addr,
    dest_addr_ton: fields.dest_addr_ton,
    dest_addr_npi: fields.dest_addr_npi,
    destination_addr: fields.destination_addr,
    esm_class: udh ? UDHI : 0,
    validity_period: fields.validity_period ?? "",
    registered_delivery: fields.registered_delivery,
    data_coding: fields.data_coding,
    short_message: udh ? Buffer.concat([udh, fields.short_message]) : fields.short_message,
  };
  const tlvs: Tlv[] = [];
  for (const name of SAR_TLVS) {
    const value = fields[name];
    if (value !== undefined) tlvs.push({ tag: TLV_TAGS.get(name) as number, value });
  }
  return request("submit_sm", body, tlvs);
}

const two = (n: number) => String(n).padStart(2, "0");

/** Whole seconds from `now` until `until`, at least one: a validity of 0 means the SMSC's default. */
export function secondsLeft(until: Date, now = Date.now()): number {
  return Math.max(1, Math.floor((until.getTime() - now) / 1000));
}

/**
 * A validity_period in SMPP's time form: seconds from submission as a relative time
 * ("YYMMDDhhmmss000R", capped at 99 days), a Date as node-smpp writes one (the absolute
 * "YYMMDDhhmmsst00+", in UTC).
 */
export function validityPeriod(validity: number | Date): string {
  if (typeof validity === "number") {
    const s = Math.min(Math.max(0, Math.floor(validity)), 99 * 86_400 - 1);
    const [d, h, m, sec] = [
      Math.floor(s / 86_400),
      Math.floor((s % 86_400) / 3600),
      Math.floor((s % 3600) / 60),
      s % 60,
    ];
    return `0000${two(d)}${two(h)}${two(m)}${two(sec)}000R`;
  }
  return (
    String(validity.getUTCFullYear()).slice(-2) +
    two(validity.getUTCMonth() + 1) +
    two(validity.getUTCDate()) +
    two(validity.getUTCHours()) +
    two(validity.getUTCMinutes()) +
    two(validity.getUTCSeconds()) +
    String(validity.getUTCMilliseconds()).padStart(3, "0").slice(0, 1) +
    "00+"
  );
}
