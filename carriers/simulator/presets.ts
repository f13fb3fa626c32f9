/**
 * Named SMSC dialects for the simulator, so a developer can rehearse a new carrier before its link
 * exists: select one per operator with SIM_<OP>_PRESET. Shiri needs no id settings for any of
 * them: on its default (`auto`) it matches a receipt's id exactly, else as the same number written
 * another way (hex or decimal, case, zero padding), from receipted_message_id or the text's `id:`.
 * `shiriSettings` holds only what a preset still needs of Shiri beyond that (concatenation by SAR,
 * one receipt per message), as SMPP_<LINK>_<FIELD> variables. "operator" is the id style the
 * simulator assumes for each operator (carriers/simulator/index.ts), not one observed on its network.
 */
import type { SmppSettings } from "../types.ts";
import type { IdStyle, ReceiptShape } from "./receipt.ts";
import type { SimulatorBehaviour, SimulatorOptions } from "./simulator.ts";

export interface SimulatorPreset {
  description: string;
  /** Undefined keeps the operator's own id styles. */
  ids?: { submit_sm_resp: IdStyle; receipt: IdStyle };
  receipts?: Partial<ReceiptShape>;
  accepts?: SimulatorOptions["accepts"];
  behaviour?: Partial<SimulatorBehaviour>;
  /**
   * The Shiri settings this SMSC needs beyond the defaults (each is SMPP_<LINK>_<FIELD> in the
   * environment). Never an id format: matching ids needs no setting.
   */
  shiriSettings: Partial<SmppSettings>;
}

const same = (style: IdStyle) => ({ submit_sm_resp: style, receipt: style });

export const PRESETS = {
  operator: {
    description: "the id style the simulator assumes for the operator (carriers/simulator/index.ts)",
    shiriSettings: {},
  },
  "string-ids": {
    description: "UUID message ids, the same in submit_sm_resp, receipted_message_id and the text",
    ids: same({ format: "uuid" }),
    shiriSettings: {},
  },
  hex64: {
    description: "64-character lower-case hex ids (a hash), in every place",
    ids: same({ format: "hex64" }),
    shiriSettings: {},
  },
  base36: {
    description: "opaque base36 ids (0-9a-z), the same in every place",
    ids: same({ format: "base36" }),
    shiriSettings: {},
  },
  decimal: {
    description: "decimal ids; the receipt text zero-pads them to 20 digits, the TLV repeats the answer's",
    ids: { submit_sm_resp: { format: "decimal" }, receipt: { format: "decimal", padTo: 20 } },
    shiriSettings: {},
  },
  "hex-decimal": {
    description:
      "hex in submit_sm_resp, the same number in decimal in the receipt text and receipted_message_id",
    ids: { submit_sm_resp: { format: "hex" }, receipt: { format: "decimal" } },
    receipts: { tlvId: "receipt" },
    shiriSettings: {},
  },
  "hex-padded-upper": {
    description:
      "lower-case hex in submit_sm_resp, upper-case hex zero-padded to 16 in the receipt text and receipted_message_id",
    ids: { submit_sm_resp: { format: "hex" }, receipt: { format: "hex", upperCase: true, padTo: 16 } },
    receipts: { tlvId: "receipt" },
    shiriSettings: {},
  },
  "per-message-receipts": {
    description: "one receipt per concatenated message, for its last segment's id",
    ids: same({ format: "uuid" }),
    receipts: { perMessage: "last" },
    shiriSettings: { receipt_scope: "message" },
  },
  "tlv-only": {
    description: "the id in receipted_message_id only: base36 ids, receipts with the TLVs and an empty text",
    ids: same({ format: "base36" }),
    receipts: { text: "none" },
    shiriSettings: {},
  },
  "text-only": {
    description:
      "the id in the receipt text only (Appendix B, no TLVs): upper-case hex in submit_sm_resp, decimal in the text",
    ids: { submit_sm_resp: { format: "hex", upperCase: true }, receipt: { format: "decimal" } },
    receipts: { tlvs: false },
    shiriSettings: {},
  },
  "message-payload": {
    description: "receipt text in the message_payload TLV, lower-case stat, no other TLVs",
    ids: same({ format: "uuid" }),
    receipts: { tlvs: false, text: "message_payload", lowerCaseStat: true },
    shiriSettings: {},
  },
  intermediate: {
    description: "ACCEPTD and ENROUTE notifications (esm_class 0x08) before every final receipt",
    ids: same({ format: "uuid" }),
    receipts: { intermediate: ["ACCEPTD", "ENROUTE"] },
    shiriSettings: {},
  },
  sar: {
    description: "concatenation by SAR TLVs only, GSM 03.38 as data_coding 1 (IA5)",
    ids: same({ format: "uuid" }),
    accepts: { concatenation: "sar", gsmDataCoding: 1 },
    shiriSettings: { concatenation: "sar", gsm_data_coding: 1 },
  },
  "late-answers": {
    description: "slow submit_sm_resp, and receipts that often overtake them",
    ids: same({ format: "uuid" }),
    behaviour: { submitLatencyMs: 150, receiptDelayMs: 0, receiptBeforeResponseRate: 0.5 },
    shiriSettings: {},
  },
} as const satisfies Record<string, SimulatorPreset>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name);
}

/** The preset's Shiri settings as environment variables for the link (by default named after its operator). */
export function shiriEnvFor(link: string, preset: PresetName): Record<string, string> {
  const settings: Partial<SmppSettings> = PRESETS[preset].shiriSettings;
  return Object.fromEntries(
    Object.entries(settings).map(([field, value]) => [
      `SMPP_${link.toUpperCase()}_${field.toUpperCase()}`,
      String(value),
    ]),
  );
}
