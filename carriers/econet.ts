import { SMPP_DEFAULTS } from "./smpp-defaults.ts";
import type { CarrierAdapter } from "./types.ts";

/** Econet Wireless: the largest network. Its SMSC answers submits with hex ids and writes receipts in decimal. */
export const econet: CarrierAdapter = {
  operator: "econet",
  prefixes: ["77", "78"],
  pricePerSegment: { USD: 450 },
  smpp: { ...SMPP_DEFAULTS, port: 2775, password: "econet1" },
  smscIdFormat: { submit_sm_resp: "hex", receipt: "decimal" },
};
