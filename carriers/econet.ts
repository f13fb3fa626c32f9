import type { CarrierAdapter } from "./types.ts";

/** Econet Wireless: the largest network. Its SMSC answers submits with hex ids and writes receipts in decimal. */
export const econet: CarrierAdapter = {
  operator: "econet",
  prefixes: ["77", "78"],
  pricePerSegment: { USD: 450 },
  smpp: {
    host: "127.0.0.1",
    port: 2775,
    system_id: "shiri",
    password: "econet1",
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
  },
  smscIdFormat: { submit_sm_resp: "hex", receipt: "decimal" },
};
