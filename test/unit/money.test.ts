import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatAmount, parseAmount } from "../../src/domain/money.ts";

describe("amounts in ten-thousandths", () => {
  it("parses decimal amounts exactly", () => {
    expect(parseAmount("25")).toBe(250_000);
    expect(parseAmount("25.5")).toBe(255_000);
    expect(parseAmount("0.0450")).toBe(450);
    expect(parseAmount(" 1.2345 ")).toBe(12_345);
  });

  it("refuses what is not a plain non-negative amount with at most 4 decimals", () => {
    for (const bad of [
      "",
      "-5",
      "1.23456",
      "abc",
      "1e3",
      "1,5",
      ".5",
      "5.",
      "0x10",
      "Infinity",
      "1000000000",
    ]) {
      expect(parseAmount(bad), bad).toBeNull();
    }
  });

  it("takes at most 999,999,999.9999, exactly: every amount stays below 2^53 ten-thousandths", () => {
    expect(parseAmount("999999999.9999")).toBe(9_999_999_999_999);
    expect(parseAmount("999999999999.9999")).toBeNull();
    expect(Number.isSafeInteger(9_999_999_999_999 * 900)).toBe(true);
  });

  it("formats and parses back", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9_999_999_999_999 }), (n) => {
        expect(parseAmount(formatAmount(n))).toBe(n);
      }),
    );
  });
});
