import { SMPP_DEFAULTS } from "./smpp-defaults.ts";
import type { CarrierAdapter } from "./types.ts";

/**
 * Econet Wireless: the largest network. Its SMSC answers submit_sm with a hex id and writes the
 * same number in decimal in the receipt text, so both sides are read as numbers
 * (SMPP_ECONET_ID_FORMAT_SUBMIT=hex, SMPP_ECONET_ID_FORMAT_RECEIPT=decimal).
 */
export const econet: CarrierAdapter = {
  operator: "econet",
  prefixes: ["77", "78"],
  pricePerSegment: { USD: 450 },
  smpp: {
    ...SMPP_DEFAULTS,
    port: 2775,
    password: "econet1",
    id_format_submit: "hex",
    id_format_receipt: "decimal",
  },
};
