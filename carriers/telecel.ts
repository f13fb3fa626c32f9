import { SMPP_DEFAULTS } from "./smpp-defaults.ts";
import type { CarrierAdapter } from "./types.ts";

/** Telecel Zimbabwe: upper-case hex ids in both places, receipts zero-padded. */
export const telecel: CarrierAdapter = {
  operator: "telecel",
  prefixes: ["73"],
  pricePerSegment: { USD: 380 },
  smpp: { ...SMPP_DEFAULTS, port: 2777, password: "telecel1" },
  smscIdFormat: { submit_sm_resp: "hex", receipt: "hex" },
};
