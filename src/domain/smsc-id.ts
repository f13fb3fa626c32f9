/**
 * SMSC message ids. SMPP 3.4 makes message_id an opaque C-Octet String of at most 65 characters.
 * A submit_sm_resp with command_status 0 is an acceptance whatever its id holds: the id is
 * recorded as the carrier wrote it (bounded), and one that cannot serve for matching is only
 * counted. Receipts are matched exactly first, then as the same number written another way
 * (hex or decimal, any case, zero padding): `numberKey` is how a segment's id is indexed for
 * that, `numberCandidates` the keys a receipt's id may stand for (docs/decisions/0001).
 * The "hex" / "decimal" formats are explicit overrides: ids stored as the decimal value.
 */
import type { SmscIdFormat } from "../../carriers/index.ts";

/** SMPP 3.4 message_id is a C-octet string of at most 65 characters. */
export const MAX_ID_LENGTH = 65;
/** What is kept of an id longer than SMPP allows (it is stored, never refused). */
export const MAX_STORED_ID_LENGTH = 255;

type NumericFormat = "hex" | "decimal";

const PATTERN: Readonly<Record<NumericFormat, RegExp>> = {
  hex: /^[0-9a-fA-F]+$/,
  decimal: /^[0-9]+$/,
};

export type IdRefusal = "empty" | "too_long" | "unreadable";
export type IdReading = { ok: true; id: string } | { ok: false; reason: IdRefusal };

/**
 * How a receipt's id was found to name its segment: written exactly alike, the same number in the
 * same base with another case or zero padding, or the number in another base (the answer in hex
 * and the receipt in decimal, or the other way round).
 */
export const ID_RELATIONS = ["exact", "same_number", "hex_to_decimal", "decimal_to_hex"] as const;
export type IdRelation = (typeof ID_RELATIONS)[number];
export type NumberRelation = Exclude<IdRelation, "exact">;

/**
 * An id as Shiri stores and matches it, or why it cannot be used: empty, longer than SMPP
 * allows, or not a number in a numeric format. An opaque id ("auto", "string") is taken verbatim
 * (no trimming: "as the carrier wrote it"); a numeric one may carry surrounding whitespace.
 */
export function readSmscId(raw: string, format: SmscIdFormat): IdReading {
  const numeric = format === "hex" || format === "decimal";
  const id = numeric ? raw.trim() : raw;
  if (id.length === 0) return { ok: false, reason: "empty" };
  if (id.length > MAX_ID_LENGTH) return { ok: false, reason: "too_long" };
  if (!numeric) return { ok: true, id };
  if (!PATTERN[format].test(id)) return { ok: false, reason: "unreadable" };
  return { ok: true, id: BigInt(format === "hex" ? `0x${id}` : id).toString() };
}

/** readSmscId's id, or null when it cannot be used. */
export function canonicalSmscId(raw: string, format: SmscIdFormat): string | null {
  const r = readSmscId(raw, format);
  return r.ok ? r.id : null;
}

/**
 * The id an accepted segment is recorded under: always one (an acceptance is never refused for
 * its id), with the reason it cannot serve for matching, if any.
 */
export function recordedSubmitId(
  raw: string,
  format: SmscIdFormat,
): { id: string; unusable: IdRefusal | null } {
  const read = readSmscId(raw, format);
  if (read.ok) return { id: read.id, unusable: null };
  return { id: raw.slice(0, MAX_STORED_ID_LENGTH), unusable: read.reason };
}

/**
 * The id as a number written in lower case without leading zeros, for an id that could be one
 * (hex digits only, as every decimal id is too); null for any other id. Ids of one number in one
 * base, in any case or padding, share it.
 */
export function numberKey(id: string): string | null {
  if (id.length === 0 || id.length > MAX_ID_LENGTH || !PATTERN.hex.test(id)) return null;
  return id.toLowerCase().replace(/^0+(?=.)/, "");
}

/** A reading of an id as the same number in the other base. */
export type CrossBaseRelation = Exclude<NumberRelation, "same_number">;

export interface NumberCandidate {
  key: string;
  relation: NumberRelation;
  /**
   * The ids show the bases this reading assumes: a hex letter on the side read as hex (the key,
   * for hex_to_decimal; the receipt's id, for decimal_to_hex). Always so for same_number. An id of
   * digits only reads as decimal as well as hex, so a cross-base reading of it is a guess, made
   * only on a link that has shown it writes that way (docs/decisions/0036).
   */
  shown: boolean;
}

const HEX_LETTER = /[a-fA-F]/;

/**
 * The number keys a receipt's id may name a segment by, with how: the same number in the same
 * base, the decimal id of a number answered in hex, the hex id of a number answered in decimal.
 * The relation is symmetric in the keys: a segment's candidates name the receipts whose own key
 * is among them, so early receipts are found from a segment's id the same way.
 */
export function numberCandidates(id: string): NumberCandidate[] {
  const same = numberKey(id);
  if (same === null) return [];
  const out: NumberCandidate[] = [{ key: same, relation: "same_number", shown: true }];
  const add = (key: string, relation: CrossBaseRelation, shown: boolean) => {
    if (!out.some((c) => c.key === key)) out.push({ key, relation, shown });
  };
  if (PATTERN.decimal.test(id)) {
    const hex = BigInt(id).toString(16);
    add(hex, "hex_to_decimal", HEX_LETTER.test(hex));
  }
  add(BigInt(`0x${id}`).toString(10), "decimal_to_hex", HEX_LETTER.test(id));
  return out;
}

/** The number key stored beside a segment's id: null when the id is its own key (or has none). */
export function storedNumberKey(id: string): string | null {
  const key = numberKey(id);
  return key === id ? null : key;
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
