import type { CarrierAdapter } from "./types.ts";

/** Telecel Zimbabwe: upper-case hex ids in both places, receipts zero-padded. */
export const telecel: CarrierAdapter = {
  operator: "telecel",
  prefixes: ["73"],
  pricePerSegment: { USD: 380 },
  smpp: {
    host: "127.0.0.1",
    port: 2777,
    system_id: "shiri",
    password: "telecel1",
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
  smscIdFormat: { submit_sm_resp: "hex", receipt: "hex" },
};
