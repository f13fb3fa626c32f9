/**
 * What Shiri knows about one operator: how to recognise its numbers, what a segment costs,
 * how to reach its SMSC and the quirks of its SMPP dialect. Code elsewhere reads these
 * tables; it never hard-codes an operator.
 */
export const OPERATORS = ["econet", "netone", "telecel"] as const;
export type Operator = (typeof OPERATORS)[number];

/** How an SMSC writes its message ids: submit_sm_resp and receipts often disagree. */
export type SmscIdFormat = "hex" | "decimal";

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
}

export interface CarrierAdapter {
  operator: Operator;
  /** National destination codes after the country code 263, e.g. "77". */
  prefixes: readonly string[];
  /** Price of one segment in ten-thousandths of the currency, per account currency. */
  pricePerSegment: Readonly<Record<string, number>>;
  smpp: SmppSettings;
  smscIdFormat: { submit_sm_resp: SmscIdFormat; receipt: SmscIdFormat };
}
