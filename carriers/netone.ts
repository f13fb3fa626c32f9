import { SMPP_DEFAULTS } from "./smpp-defaults.ts";
import type { CarrierAdapter } from "./types.ts";

/** NetOne: the state operator. Decimal ids in both places. */
export const netone: CarrierAdapter = {
  operator: "netone",
  prefixes: ["71"],
  pricePerSegment: { USD: 400 },
  smpp: { ...SMPP_DEFAULTS, port: 2776, password: "netone1" },
  smscIdFormat: { submit_sm_resp: "decimal", receipt: "decimal" },
};
