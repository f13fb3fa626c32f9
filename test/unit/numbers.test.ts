import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CARRIERS, OPERATORS } from "../../carriers/index.ts";
import { resolveOperator, toWireMsisdn } from "../../src/domain/numbers.ts";

const digit = fc.constantFrom(..."0123456789");
const digits = (n: number) => fc.string({ unit: digit, minLength: n, maxLength: n });
const nineDigits = digits(9);
const WELL_FORMED = /^\+?263[0-9]{9}$/;

/** Expected operator for the 9 national digits, read from the carrier tables the way ops see them. */
function expectedOperator(national: string) {
  return OPERATORS.find((op) => CARRIERS[op].prefixes.some((p) => national.startsWith(p))) ?? null;
}

describe("resolveOperator, examples", () => {
  it.each([
    ["263771234567", "econet"],
    ["+263781234567", "econet"],
    ["263711234567", "netone"],
    ["+263731234567", "telecel"],
    ["  +263771234567\t", "econet"],
  ] as const)("routes %j to %s", (to, op) => {
    expect(resolveOperator(to)).toBe(op);
  });

  it.each([
    ["local format", "0771234567"],
    ["unknown Zimbabwean prefix", "263791234567"],
    ["foreign number", "+27821234567"],
    ["too short", "26377123456"],
    ["too long", "2637712345678"],
    ["letters", "26377123456a"],
    ["space inside", "+263 77 123 4567"],
    ["dash inside", "263-771234567"],
    ["two plus signs", "++263771234567"],
    ["plus in the middle", "263+771234567"],
    ["Arabic-Indic digits", "٢٦٣٧٧١٢٣٤٥٦٧"],
    ["empty", ""],
    ["blank", "   "],
    ["double-zero international prefix", "00263771234567"],
  ])("rejects %s (%j)", (_name, to) => {
    expect(resolveOperator(to)).toBeNull();
    expect(toWireMsisdn(to)).toBeNull();
  });
});

describe("toWireMsisdn, examples", () => {
  it("returns digits only, without + or surrounding whitespace", () => {
    expect(toWireMsisdn(" +263771234567 ")).toBe("263771234567");
    expect(toWireMsisdn("263731234567")).toBe("263731234567");
  });
});

describe("numbers, properties", () => {
  it("routes 263 + 9 digits by the carrier prefixes, with or without + and surrounding whitespace", () => {
    const ws = fc.string({ unit: fc.constantFrom(" ", "\t", "\n"), maxLength: 3 });
    fc.assert(
      fc.property(nineDigits, ws, ws, (national, before, after) => {
        const expected = expectedOperator(national);
        expect(resolveOperator(`263${national}`)).toBe(expected);
        expect(resolveOperator(`+263${national}`)).toBe(expected);
        expect(resolveOperator(`${before}+263${national}${after}`)).toBe(expected);
        expect(toWireMsisdn(`${before}+263${national}${after}`)).toBe(
          expected === null ? null : `263${national}`,
        );
      }),
      { numRuns: 500 },
    );
  });

  it("routes every carrier prefix to its carrier", () => {
    fc.assert(
      fc.property(fc.constantFrom(...OPERATORS), digits(7), fc.boolean(), (op, rest, plus) => {
        for (const prefix of CARRIERS[op].prefixes) {
          const to = `${plus ? "+" : ""}263${prefix}${rest}`;
          expect(resolveOperator(to)).toBe(op);
        }
      }),
    );
  });

  // Near misses of a valid number, each breaking one rule of the format; insertions stay strictly
  // inside because surrounding whitespace is allowed.
  const nearMiss = fc.oneof(
    digits(8).map((d) => `263${d}`),
    digits(10).map((d) => `263${d}`),
    nineDigits.map((d) => `0${d}`),
    nineDigits.map((d) => `0263${d}`),
    fc
      .tuple(digits(3), nineDigits)
      .filter(([cc]) => cc !== "263")
      .map(([cc, d]) => `+${cc}${d}`),
    fc
      .tuple(nineDigits, fc.nat(8), fc.constantFrom(" ", "a", "-", ".", "+", "٣", "\u00a0"))
      .map(([d, i, c]) => `263${d.slice(0, i)}${c}${d.slice(i + 1)}`),
    fc
      .tuple(nineDigits, fc.nat(8), fc.constantFrom(" ", "-", "/"))
      .map(([d, i, c]) => `+263${d.slice(0, i)}${c}${d.slice(i)}`),
  );

  it("rejects near misses of the international format", () => {
    fc.assert(
      fc.property(nearMiss, (to) => {
        expect(WELL_FORMED.test(to.trim())).toBe(false);
        expect(resolveOperator(to)).toBeNull();
        expect(toWireMsisdn(to)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it("rejects any string that is not 263 + 9 digits", () => {
    const text = fc.oneof(
      fc.string({ unit: fc.constantFrom(..."+0123456789 a"), maxLength: 16 }),
      fc.string({ maxLength: 20 }),
    );
    fc.assert(
      fc.property(text, (to) => {
        fc.pre(!WELL_FORMED.test(to.trim()));
        expect(resolveOperator(to)).toBeNull();
        expect(toWireMsisdn(to)).toBeNull();
      }),
      { numRuns: 1000 },
    );
  });
});
