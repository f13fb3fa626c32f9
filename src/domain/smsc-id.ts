/**
 * SMSC message ids. SMPP 3.4 makes message_id an opaque C-Octet String of at most 65 characters,
 * so by default ("string") an id is kept and matched exactly as the carrier wrote it. A carrier
 * that writes one number differently in submit_sm_resp and in its receipts (hex in one, decimal
 * in the other, any case, zero padding) is configured "hex" / "decimal": its ids are then stored
 * and matched as the decimal string of the value.
 */
import type { SmscIdFormat } from "../../carriers/index.ts";

/** SMPP 3.4 message_id is a C-octet string of at most 65 characters. */
export const MAX_ID_LENGTH = 65;

type NumericFormat = Exclude<SmscIdFormat, "string">;

const PATTERN: Readonly<Record<NumericFormat, RegExp>> = {
  hex: /^[0-9a-fA-F]+$/,
  decimal: /^[0-9]+$/,
};

export type IdRefusal = "empty" | "too_long" | "unreadable";
export type IdReading = { ok: true; id: string } | { ok: false; reason: IdRefusal };

/**
 * An id as Shiri stores and matches it, or why it cannot be used: empty, longer than SMPP
 * allows, or not a number in a numeric format. A string id is taken verbatim (no trimming:
 * "as the carrier wrote it"); a numeric one may carry surrounding whitespace.
 */
export function readSmscId(raw: string, format: SmscIdFormat): IdReading {
  const id = format === "string" ? raw : raw.trim();
  if (id.length === 0) return { ok: false, reason: "empty" };
  if (id.length > MAX_ID_LENGTH) return { ok: false, reason: "too_long" };
  if (format === "string") return { ok: true, id };
  if (!PATTERN[format].test(id)) return { ok: false, reason: "unreadable" };
  return { ok: true, id: BigInt(format === "hex" ? `0x${id}` : id).toString() };
}

/** The submit_sm_resp message_id (and a receipt's receipted_message_id, which repeats it). */
export function readSubmitId(raw: string, format: SmscIdFormat): IdReading {
  return readSmscId(raw, format);
}

/** readSmscId's id, or null when it cannot be used. */
export function canonicalSmscId(raw: string, format: SmscIdFormat): string | null {
  const r = readSmscId(raw, format);
  return r.ok ? r.id : null;
}

export function formatSmscId(
  value: bigint,
  format: NumericFormat,
  opts: { upperCase?: boolean; padTo?: number } = {},
): string {
  if (value < 0n) throw new RangeError(`an SMSC id cannot be negative: ${value}`);
  const digits = value.toString(format === "hex" ? 16 : 10);
  const cased = opts.upperCase ? digits.toUpperCase() : digits;
  const id = cased.padStart(opts.padTo ?? 0, "0");
  // Refuse to write an id that readSmscId (and a real SMPP peer) would reject.
  if (id.length > MAX_ID_LENGTH) {
    throw new RangeError(`SMSC id ${id.length} characters long exceeds ${MAX_ID_LENGTH}`);
  }
  return id;
}
