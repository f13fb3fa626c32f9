import { SMPP_DEFAULTS } from "./smpp-defaults.ts";
import type { CarrierAdapter } from "./types.ts";

/**
 * NetOne: the state operator. Nothing here is observed on NetOne's live SMSC: the link speaks
 * plain SMPP 3.4 with opaque ids, matched tolerantly (see carriers/econet.ts).
 */
export const netone: CarrierAdapter = {
  operator: "netone",
  prefixes: ["71"],
  pricePerSegment: { USD: 400 },
  smpp: { ...SMPP_DEFAULTS, port: 2776, password: "netone1" },
};
