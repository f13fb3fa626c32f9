import { SMPP_DEFAULTS } from "./smpp-defaults.ts";
import type { CarrierAdapter } from "./types.ts";

/**
 * Telecel Zimbabwe: upper-case hex ids in submit_sm_resp, zero-padded to 16 characters in the
 * receipt text, so both sides are read as hex numbers (SMPP_TELECEL_ID_FORMAT_SUBMIT=hex,
 * SMPP_TELECEL_ID_FORMAT_RECEIPT=hex).
 */
export const telecel: CarrierAdapter = {
  operator: "telecel",
  prefixes: ["73"],
  pricePerSegment: { USD: 380 },
  smpp: {
    ...SMPP_DEFAULTS,
    port: 2777,
    password: "telecel1",
    id_format_submit: "hex",
    id_format_receipt: "hex",
  },
};
