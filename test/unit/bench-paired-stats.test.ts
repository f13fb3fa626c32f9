import { describe, expect, it } from "vitest";
import { compare, criticalT, pairOrder, summarise } from "../../bench/lib/paired-stats.ts";

describe("paired bench statistics (bench/lib/paired-stats.ts)", () => {
  it("summarises runs as their mean and its standard error", () => {
    const s = summarise([1, 2, 3, 4]);
    expect(s.mean).toBe(2.5);
    // sample variance 5/3, over 4 runs: sqrt(5/12)
    expect(s.standardError).toBeCloseTo(Math.sqrt(5 / 12), 12);
    expect([s.min, s.max, s.runs]).toEqual([1, 4, 4]);
    expect(summarise([7]).standardError).toBe(0);
    expect(() => summarise([])).toThrow("no runs");
  });

  it("reports a difference past Student's 95 % point at Welch's degrees of freedom, and not one inside it", () => {
    const base = [100, 102, 98, 101, 99];
    const apart = compare(base, [110, 112, 108, 111, 109]);
    expect(apart.difference).toBe(10);
    expect(apart.relative).toBeCloseTo(0.1, 12);
    // Each side's standard error sqrt(2.5 / 5); equal sides of 5 runs: 8 degrees of freedom.
    expect(apart.t).toBeCloseTo(10, 12);
    expect(apart.degreesOfFreedom).toBeCloseTo(8, 12);
    expect(apart.verdict).toBe("differs");
    // The same shift inside a spread ten times as wide: t = 1.
    const noisy = compare([100, 120, 80, 110, 90], [110, 130, 90, 120, 100]);
    expect(noisy.t).toBeCloseTo(1, 12);
    expect(noisy.verdict).toBe("within the noise");
    // A fall is a difference too.
    expect(compare(base, [90, 92, 88, 91, 89]).verdict).toBe("differs");
  });

  it("asks more of few runs: a t of 2.5 is noise with two runs a side and a difference with ten", () => {
    const two = compare([0, 2], [3.5, 5.5]);
    expect(two.t).toBeCloseTo(3.5 / Math.SQRT2, 12);
    expect(two.degreesOfFreedom).toBeCloseTo(2, 12);
    expect(two.verdict).toBe("within the noise");
    const spread = (mean: number) => [...Array(5).fill(mean - 1), ...Array(5).fill(mean + 1)] as number[];
    // Each side's standard error sqrt(10/9 / 10): a shift of 2.5 × sqrt(2/9) is t = 2.5 at 18 df.
    const ten = compare(spread(10), spread(10 + 2.5 * Math.sqrt(2 / 9)));
    expect(ten.t).toBeCloseTo(2.5, 12);
    expect(ten.verdict).toBe("differs");
  });

  it("reads Student's points off its table, the stricter row between two", () => {
    expect(criticalT(1)).toBe(12.706);
    expect(criticalT(8.9)).toBe(2.306);
    expect(criticalT(30)).toBe(2.042);
    expect(criticalT(35)).toBe(2.042);
    expect(criticalT(45)).toBe(2.021);
    expect(criticalT(1000)).toBe(1.98);
    expect(criticalT(Number.POSITIVE_INFINITY)).toBe(1.96);
    expect(criticalT(0.5)).toBe(Number.POSITIVE_INFINITY);
  });

  it("gives no verdict on one run a side, and an exact one when neither side varies", () => {
    expect(compare([5], [9, 9])).toMatchObject({ difference: 4, t: null, verdict: "too few runs" });
    expect(compare([5, 5], [5, 5])).toMatchObject({ t: null, verdict: "within the noise" });
    expect(compare([5, 5], [6, 6])).toMatchObject({ t: null, verdict: "differs" });
    expect(compare([0, 0], [1, 1]).relative).toBeNull();
  });

  it("alternates which build runs first", () => {
    expect([0, 1, 2, 3].map(pairOrder)).toEqual([
      ["base", "candidate"],
      ["candidate", "base"],
      ["base", "candidate"],
      ["candidate", "base"],
    ]);
  });
});
