import type { SmppSettings } from "./types.ts";

/**
 * What the three operators' SMSCs have in common; each adapter adds its address and credentials
 * and any quirk of its dialect. The defaults are plain SMPP 3.4: opaque ids matched tolerantly, data_coding 0 for
 * GSM 03.38, UDH concatenation, a receipt per segment.
 */
export const SMPP_DEFAULTS: Omit<SmppSettings, "port" | "password"> = {
  host: "127.0.0.1",
  system_id: "shiri",
  system_type: "",
  bind_mode: "transceiver",
  window_size: 50,
  tps_limit: 0,
  max_binds: 1,
  enquire_link_interval_ms: 30_000,
  response_timeout_ms: 10_000,
  source_addr_ton: 5,
  source_addr_npi: 0,
  dest_addr_ton: 1,
  dest_addr_npi: 1,
  numeric_source_addr_ton: 1,
  numeric_source_addr_npi: 1,
  id_format_submit: "auto",
  id_format_receipt: "auto",
  gsm_data_coding: 0,
  concatenation: "udh",
  receipt_scope: "segment",
};
