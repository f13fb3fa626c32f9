/**
 * Named SMSC dialects for the simulator, so a developer can rehearse a new carrier before its link
 * exists: select one per operator with SIM_<OP>_PRESET, and give Shiri the settings that go with
 * it (`shiriSettings`, as SMPP_<OP>_<FIELD> variables). "operator" is the operator's own dialect.
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
  /** The Shiri carrier settings this SMSC needs (each is SMPP_<OP>_<FIELD> in the environment). */
  shiriSettings: Partial<SmppSettings>;
}

const same = (style: IdStyle) => ({ submit_sm_resp: style, receipt: style });
const OPAQUE = { id_format_submit: "string", id_format_receipt: "string" } as const;

export const PRESETS = {
  operator: {
    description: "the operator's own SMSC, as carriers/<operator>.ts describes it",
    shiriSettings: {},
  },
  "string-ids": {
    description: "UUID message ids, the same in submit_sm_resp, receipted_message_id and the text",
    ids: same({ format: "uuid" }),
    shiriSettings: OPAQUE,
  },
  hex64: {
    description: "64-character lower-case hex ids (a hash), in every place",
    ids: same({ format: "hex64" }),
    shiriSettings: OPAQUE,
  },
  base36: {
    description: "base36 ids (0-9a-z)",
    ids: same({ format: "base36" }),
    shiriSettings: OPAQUE,
  },
  decimal: {
    description: "decimal ids, zero-padded to 20 digits in the receipt text only",
    ids: { submit_sm_resp: { format: "decimal" }, receipt: { format: "decimal", padTo: 20 } },
    shiriSettings: { id_format_submit: "decimal", id_format_receipt: "decimal" },
  },
  "per-message-receipts": {
    description: "one receipt per concatenated message, for its last segment's id",
    ids: same({ format: "uuid" }),
    receipts: { perMessage: "last" },
    shiriSettings: { ...OPAQUE, receipt_scope: "message" },
  },
  "tlv-only": {
    description: "receipts with the TLVs and an empty short_message",
    ids: same({ format: "base36" }),
    receipts: { text: "none" },
    shiriSettings: OPAQUE,
  },
  "text-only": {
    description: "receipts with the Appendix B text only: hex in submit_sm_resp, decimal in the text",
    ids: { submit_sm_resp: { format: "hex", upperCase: true }, receipt: { format: "decimal" } },
    receipts: { tlvs: false },
    shiriSettings: { id_format_submit: "hex", id_format_receipt: "decimal" },
  },
  "message-payload": {
    description: "receipt text in the message_payload TLV, lower-case stat, no other TLVs",
    ids: same({ format: "uuid" }),
    receipts: { tlvs: false, text: "message_payload", lowerCaseStat: true },
    shiriSettings: OPAQUE,
  },
  intermediate: {
    description: "ACCEPTD and ENROUTE notifications (esm_class 0x08) before every final receipt",
    ids: same({ format: "uuid" }),
    receipts: { intermediate: ["ACCEPTD", "ENROUTE"] },
    shiriSettings: OPAQUE,
  },
  sar: {
    description: "concatenation by SAR TLVs only, GSM 03.38 as data_coding 1 (IA5)",
    ids: same({ format: "uuid" }),
    accepts: { concatenation: "sar", gsmDataCoding: 1 },
    shiriSettings: { ...OPAQUE, concatenation: "sar", gsm_data_coding: 1 },
  },
  "late-answers": {
    description: "slow submit_sm_resp, and receipts that often overtake them",
    ids: same({ format: "uuid" }),
    behaviour: { submitLatencyMs: 150, receiptDelayMs: 0, receiptBeforeResponseRate: 0.5 },
    shiriSettings: OPAQUE,
  },
} as const satisfies Record<string, SimulatorPreset>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name);
}

/** The preset's Shiri settings as environment variables for the operator. */
export function shiriEnvFor(operator: string, preset: PresetName): Record<string, string> {
  const settings: Partial<SmppSettings> = PRESETS[preset].shiriSettings;
  return Object.fromEntries(
    Object.entries(settings).map(([field, value]) => [
      `SMPP_${operator.toUpperCase()}_${field.toUpperCase()}`,
      String(value),
    ]),
  );
}
