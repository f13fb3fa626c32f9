import { SMPP_DEFAULTS } from "./smpp-defaults.ts";
import type { CarrierAdapter } from "./types.ts";

/**
 * Econet Wireless: the largest network. Nothing here is observed on Econet's live SMSC: the link
 * speaks plain SMPP 3.4 with opaque ids (matched exactly, else as the same number written another
 * way), which serves whatever ids it turns out to write. `shiri carrier ids econet` shows what it
 * was learnt to use.
 */
export const econet: CarrierAdapter = {
  operator: "econet",
  prefixes: ["77", "78"],
  pricePerSegment: { USD: 450 },
  smpp: { ...SMPP_DEFAULTS, port: 2775, password: "econet1" },
};
