import { describe, expect, it } from "vitest";
import { CongestionWindow } from "../../src/smpp/congestion-window.ts";

describe("CongestionWindow", () => {
  it("starts at its ceiling, and accepted answers there change nothing", () => {
    const window = new CongestionWindow(50);
    expect(window.size).toBe(50);
    expect(window.reduced).toBe(false);
    expect(window.accepted()).toBeNull();
    expect(window.size).toBe(50);
  });

  it("drops to one on a throttle, once: the rest of the burst's throttles change nothing", () => {
    const window = new CongestionWindow(50);
    expect(window.throttled()).toEqual({ from: 50, to: 1 });
    expect(window.throttled()).toBeNull();
    expect(window.size).toBe(1);
    expect(window.reduced).toBe(true);
  });

  it("grows back by one per accepted answer, up to the ceiling and no further", () => {
    const window = new CongestionWindow(4);
    window.throttled();
    expect(window.accepted()).toEqual({ from: 1, to: 2 });
    expect(window.accepted()).toEqual({ from: 2, to: 3 });
    expect(window.accepted()).toEqual({ from: 3, to: 4 });
    expect(window.reduced).toBe(false);
    expect(window.accepted()).toBeNull();
    expect(window.size).toBe(4);
  });

  it("drops to one again on a throttle while growing back, however far it had grown", () => {
    const window = new CongestionWindow(10);
    window.throttled();
    for (let i = 0; i < 5; i++) window.accepted();
    expect(window.size).toBe(6);
    expect(window.throttled()).toEqual({ from: 6, to: 1 });
    expect(window.size).toBe(1);
  });

  it("with a window of one, a throttle changes nothing", () => {
    const window = new CongestionWindow(1);
    expect(window.throttled()).toBeNull();
    expect(window.accepted()).toBeNull();
    expect(window.size).toBe(1);
  });

  it("refuses a ceiling that is not a whole number of at least one", () => {
    expect(() => new CongestionWindow(0)).toThrow(RangeError);
    expect(() => new CongestionWindow(2.5)).toThrow(RangeError);
  });
});
