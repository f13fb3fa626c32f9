import { SMPP_DEFAULTS } from "./smpp-defaults.ts";
import type { CarrierAdapter } from "./types.ts";

/**
 * NetOne: the state operator. Its ids are decimal but written identically in submit_sm_resp and
 * receipts, so they stay opaque strings (the default): no conversion is needed.
 */
export const netone: CarrierAdapter = {
  operator: "netone",
  prefixes: ["71"],
  pricePerSegment: { USD: 400 },
  smpp: { ...SMPP_DEFAULTS, port: 2776, password: "netone1" },
};
