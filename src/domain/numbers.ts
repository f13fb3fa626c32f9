/**
 * Recipient numbers: which operator a `to` routes to, and how it is written on the wire.
 * Prefixes live in the carrier tables; this module only reads them.
 */
import { CARRIERS, COUNTRY_CODE, OPERATORS, type Operator } from "../../carriers/index.ts";

/** Digits after the country code in a Zimbabwean MSISDN (NDC + subscriber number). */
const NATIONAL_DIGITS = 9;
// [0-9] rather than \d so the rule stays ASCII-only whatever flags are added later.
const INTERNATIONAL = new RegExp(`^\\+?(${COUNTRY_CODE}[0-9]{${NATIONAL_DIGITS}})$`);

const PREFIX_TO_OPERATOR: ReadonlyMap<string, Operator> = (() => {
  const map = new Map<string, Operator>();
  for (const op of OPERATORS) {
    for (const prefix of CARRIERS[op].prefixes) {
      const owner = map.get(prefix);
      // Two carriers claiming one prefix would make routing depend on table order.
      if (owner !== undefined) throw new Error(`prefix ${prefix} is claimed by both ${owner} and ${op}`);
      if (!/^[0-9]+$/.test(prefix))
        throw new Error(`prefix ${JSON.stringify(prefix)} of ${op} is not digits`);
      map.set(prefix, op);
    }
  }
  return map;
})();

/** Prefix lengths to try, longest first, so a longer prefix wins over a shorter one it extends. */
const PREFIX_LENGTHS = [...new Set([...PREFIX_TO_OPERATOR.keys()].map((p) => p.length))].sort(
  (a, b) => b - a,
);

/** The wire form (digits only, with country code) of a well-formed international number. */
function wellFormed(to: string): string | null {
  const match = INTERNATIONAL.exec(to.trim());
  return match?.[1] ?? null;
}

function operatorOf(msisdn: string): Operator | null {
  const national = msisdn.slice(COUNTRY_CODE.length);
  for (const length of PREFIX_LENGTHS) {
    const op = PREFIX_TO_OPERATOR.get(national.slice(0, length));
    if (op !== undefined) return op;
  }
  return null;
}

export function resolveOperator(to: string): Operator | null {
  const msisdn = wellFormed(to);
  return msisdn === null ? null : operatorOf(msisdn);
}

export function toWireMsisdn(to: string): string | null {
  const msisdn = wellFormed(to);
  return msisdn !== null && operatorOf(msisdn) !== null ? msisdn : null;
}

/** A national number with its trunk 0: 0 and the 9 national digits. */
const NATIONAL_WITH_TRUNK = new RegExp(`^0([0-9]{${NATIONAL_DIGITS}})$`);
const NATIONAL_WITHOUT_TRUNK = new RegExp(`^[1-9][0-9]{${NATIONAL_DIGITS - 1}}$`);
/** SMPP type of number "national" (SMPP 3.4 5.2.5). */
const TON_NATIONAL = 2;

/**
 * A number in the form opt-out lists, inbound numbers and inbound messages compare it in:
 * digits only, with the country code. "+263771234567", "263771234567", "00263771234567" and
 * "0771234567" are one number; so is "771234567" when the SMSC marks it national (TON 2).
 * Anything else (a short code, a foreign number) is kept as its digits. That Zimbabwean SMSCs
 * write MO addresses in one of these forms is an assumption, not observed on a live link.
 */
export function internationalForm(raw: string, typeOfNumber?: number): string {
  const written = raw.trim();
  if (written.startsWith("+")) return written.slice(1);
  if (written.startsWith("00")) return written.slice(2);
  const national = NATIONAL_WITH_TRUNK.exec(written);
  if (national) return COUNTRY_CODE + national[1];
  if (typeOfNumber === TON_NATIONAL && NATIONAL_WITHOUT_TRUNK.test(written)) return COUNTRY_CODE + written;
  return written;
}

/**
 * The ways a send's `to` (stored as sent, trimmed) may write a number in international form: with
 * or without `+` or `00`, and for a Zimbabwean number its national form with the trunk 0.
 */
export function writtenForms(international: string): string[] {
  const forms = [international, `+${international}`, `00${international}`];
  const national = international.startsWith(COUNTRY_CODE) ? international.slice(COUNTRY_CODE.length) : null;
  if (national !== null && national.length === NATIONAL_DIGITS) forms.push(`0${national}`);
  return forms;
}
