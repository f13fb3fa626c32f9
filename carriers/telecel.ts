import { SMPP_DEFAULTS } from "./smpp-defaults.ts";
import type { CarrierAdapter } from "./types.ts";

/**
 * Telecel Zimbabwe. Nothing here is observed on Telecel's live SMSC: the link speaks plain SMPP
 * 3.4 with opaque ids, matched tolerantly (see carriers/econet.ts).
 */
export const telecel: CarrierAdapter = {
  operator: "telecel",
  prefixes: ["73"],
  pricePerSegment: { USD: 380 },
  smpp: { ...SMPP_DEFAULTS, port: 2777, password: "telecel1" },
};
