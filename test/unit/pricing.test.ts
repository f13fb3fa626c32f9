import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CARRIERS, OPERATORS, type Operator } from "../../carriers/index.ts";
import { isPricedCurrency, priceMessage, pricePerSegment } from "../../src/domain/pricing.ts";

const usd = (op: Operator) => CARRIERS[op].pricePerSegment.USD;

describe("pricePerSegment", () => {
  it("reads each operator's own USD price from its carrier table", () => {
    // The tables price each operator differently, so a mix-up between operators shows here.
    expect(new Set(OPERATORS.map(usd)).size).toBe(OPERATORS.length);
    for (const op of OPERATORS) expect(pricePerSegment(op, "USD"), op).toBe(usd(op));
  });

  it("bills an unroutable number at the highest per-segment price in the currency", () => {
    const prices = OPERATORS.map((op) => usd(op) ?? 0);
    expect(pricePerSegment(null, "USD")).toBe(Math.max(...prices));
    expect(pricePerSegment(null, "USD")).toBeGreaterThan(Math.min(...prices));
  });

  it.each(["ZWG", "usd", "", "constructor", "__proto__", "toString"])(
    "throws a clear error for unpriced currency %j",
    (currency) => {
      expect(() => pricePerSegment("econet", currency)).toThrow(
        `no carrier prices messages in currency ${currency}`,
      );
      expect(() => pricePerSegment(null, currency)).toThrow(/no carrier prices messages/);
    },
  );
});

describe("isPricedCurrency", () => {
  it("is true for a currency the carriers price and false otherwise", () => {
    expect(isPricedCurrency("USD")).toBe(true);
    expect(isPricedCurrency("ZWG")).toBe(false);
    expect(isPricedCurrency("usd")).toBe(false);
    expect(isPricedCurrency("hasOwnProperty")).toBe(false);
  });
});

describe("priceMessage", () => {
  it("multiplies the per-segment price by the segments", () => {
    expect(priceMessage("econet", 3, "USD")).toBe(3 * (usd("econet") ?? Number.NaN));
    expect(priceMessage(null, 2, "USD")).toBe(2 * pricePerSegment(null, "USD"));
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])("rejects %d segments", (segments) => {
    expect(() => priceMessage("netone", segments, "USD")).toThrow(RangeError);
  });

  it("refuses a total that would lose integer precision", () => {
    expect(() => priceMessage("econet", Number.MAX_SAFE_INTEGER, "USD")).toThrow(/overflows/);
  });

  it("is an integer, linear in segments, and never below the operator's own price for unroutable", () => {
    const operator = fc.constantFrom<Operator | null>(null, ...OPERATORS);
    fc.assert(
      fc.property(operator, fc.integer({ min: 1, max: 10_000 }), (op, segments) => {
        const total = priceMessage(op, segments, "USD");
        expect(Number.isSafeInteger(total)).toBe(true);
        expect(total).toBe(priceMessage(op, 1, "USD") * segments);
        expect(priceMessage(null, segments, "USD")).toBeGreaterThanOrEqual(total);
      }),
    );
  });
});

describe("pricing against other carrier tables", () => {
  afterEach(() => {
    vi.doUnmock("../../carriers/index.ts");
    vi.resetModules();
  });

  async function pricingWith(prices: Record<Operator, Record<string, number>>) {
    vi.resetModules();
    vi.doMock("../../carriers/index.ts", async (importOriginal) => {
      const original = await importOriginal<typeof import("../../carriers/index.ts")>();
      const carriers = Object.fromEntries(
        OPERATORS.map((op) => [op, { ...original.CARRIERS[op], pricePerSegment: prices[op] }]),
      );
      return { ...original, CARRIERS: carriers };
    });
    return import("../../src/domain/pricing.ts");
  }

  it("takes the highest among the carriers that price the currency, and errors for one that does not", async () => {
    const pricing = await pricingWith({
      econet: { USD: 450 },
      netone: { USD: 400, ZAR: 90 },
      telecel: { ZAR: 120 },
    });
    expect(pricing.isPricedCurrency("ZAR")).toBe(true);
    expect(pricing.pricePerSegment(null, "ZAR")).toBe(120);
    expect(pricing.pricePerSegment(null, "USD")).toBe(450);
    expect(() => pricing.pricePerSegment("econet", "ZAR")).toThrow(
      "carrier econet has no price in currency ZAR",
    );
  });

  it("rejects a non-integer price in a carrier table", async () => {
    const pricing = await pricingWith({ econet: { USD: 4.5 }, netone: { USD: 400 }, telecel: { USD: 380 } });
    expect(() => pricing.pricePerSegment("econet", "USD")).toThrow(/invalid USD price 4.5/);
    expect(() => pricing.pricePerSegment(null, "USD")).toThrow(/invalid USD price 4.5/);
  });
});
