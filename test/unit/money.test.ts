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
    for (const bad of ["", "-5", "1.23456", "abc", "1e3", "1,5", ".5", "5.", "0x10", "Infinity"]) {
      expect(parseAmount(bad), bad).toBeNull();
    }
  });

  it("formats and parses back", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e15 }), (n) => {
        expect(parseAmount(formatAmount(n))).toBe(n);
      }),
    );
  });
});
