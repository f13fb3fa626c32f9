/**
 * SMSC message ids. A carrier may answer submit_sm in hex and write receipts in decimal, with any
 * case and leading zeros, so ids are stored and matched in one canonical form: the decimal string
 * of the value.
 */
import type { SmscIdFormat } from "../../carriers/index.ts";

/** SMPP 3.4 message_id is a C-octet string of at most 65 characters. */
const MAX_ID_LENGTH = 65;

const PATTERN: Readonly<Record<SmscIdFormat, RegExp>> = {
  hex: /^[0-9a-fA-F]+$/,
  decimal: /^[0-9]+$/,
};

export function canonicalSmscId(raw: string, format: SmscIdFormat): string | null {
  const id = raw.trim();
  if (id.length === 0 || id.length > MAX_ID_LENGTH || !PATTERN[format].test(id)) return null;
  return BigInt(format === "hex" ? `0x${id}` : id).toString();
}

export function formatSmscId(
  value: bigint,
  format: SmscIdFormat,
  opts: { upperCase?: boolean; padTo?: number } = {},
): string {
  if (value < 0n) throw new RangeError(`an SMSC id cannot be negative: ${value}`);
  const digits = value.toString(format === "hex" ? 16 : 10);
  const cased = opts.upperCase ? digits.toUpperCase() : digits;
  const id = cased.padStart(opts.padTo ?? 0, "0");
  // Refuse to write an id that canonicalSmscId (and a real SMPP peer) would reject.
  if (id.length > MAX_ID_LENGTH) {
    throw new RangeError(`SMSC id ${id.length} characters long exceeds ${MAX_ID_LENGTH}`);
  }
  return id;
}
