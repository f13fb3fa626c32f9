/**
 * What Shiri knows about one operator: how to recognise its numbers, what a segment costs, and
 * the default link (SMPP account) that reaches it. Code elsewhere reads these tables; it never
 * hard-codes an operator. Links and routes are configuration (src/config.ts).
 */
export const OPERATORS = ["econet", "netone", "telecel"] as const;
export type Operator = (typeof OPERATORS)[number];

/**
 * How an SMSC writes its message ids. "auto" (the default): an opaque C-Octet String, as SMPP 3.4
 * defines message_id, matched exactly first and else as the same number written another way (hex
 * or decimal, any case, zero padding), never guessing between two segments (src/domain/smsc-id.ts).
 * Overrides: "string" matches exactly only; "hex" / "decimal" read a number in that base on that
 * side (a carrier configured so must then be numeric on both sides).
 */
export const SMSC_ID_FORMATS = ["auto", "string", "hex", "decimal"] as const;
export type SmscIdFormat = (typeof SMSC_ID_FORMATS)[number];

/** GSM 03.38 text as data_coding 0 (SMSC default alphabet) or 1 (IA5, which some SMSCs want). */
export const GSM_DATA_CODINGS = [0, 1] as const;
/** Long messages: a UDH with an 8-bit reference, or the sar_* TLVs. */
export const CONCATENATIONS = ["udh", "sar"] as const;
/** A receipt for every segment, or one per message (carrying the first or last segment's id). */
export const RECEIPT_SCOPES = ["segment", "message"] as const;

export interface SmppSettings {
  host: string;
  port: number;
  system_id: string;
  password: string;
  system_type: string;
  bind_mode: "transceiver";
  /** Most submit_sm PDUs in flight at once on the session. */
  window_size: number;
  /** submit_sm PDUs per second the carrier allows across all our binds; 0 = no limit. */
  tps_limit: number;
  /** Binds the carrier allows at once; workers share these slots (and the TPS) through Postgres. */
  max_binds: number;
  enquire_link_interval_ms: number;
  /** How long to wait for a submit_sm_resp before treating the submit as unknown. */
  response_timeout_ms: number;
  /** TON/NPI for alphanumeric sender ids (5 = alphanumeric, 0 = unknown). */
  source_addr_ton: number;
  source_addr_npi: number;
  /** TON/NPI for international MSISDNs (1 = international, 1 = ISDN/E.164). */
  dest_addr_ton: number;
  dest_addr_npi: number;
  /** TON/NPI for a numeric sender id (1 = international, 1 = ISDN/E.164). */
  numeric_source_addr_ton: number;
  numeric_source_addr_npi: number;
  /** How message_id is written in submit_sm_resp ("auto": opaque, matched tolerantly). */
  id_format_submit: SmscIdFormat;
  /** How a receipt's id (receipted_message_id, else the text's `id:`) is written. */
  id_format_receipt: SmscIdFormat;
  gsm_data_coding: (typeof GSM_DATA_CODINGS)[number];
  concatenation: (typeof CONCATENATIONS)[number];
  receipt_scope: (typeof RECEIPT_SCOPES)[number];
}

export interface CarrierAdapter {
  operator: Operator;
  /** National destination codes after the country code 263, e.g. "77". */
  prefixes: readonly string[];
  /** Price of one segment in ten-thousandths of the currency, per account currency. */
  pricePerSegment: Readonly<Record<string, number>>;
  /**
   * The settings of the link named after the operator, its route by default; every field can be
   * overridden from the environment as SMPP_<LINK>_<FIELD> (src/config.ts).
   */
  smpp: SmppSettings;
}
