import CircuitBreaker from "opossum";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BreakerClock } from "../../src/dispatch/breaker-clock.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("the breakers' clock", () => {
  it("turns only from a submit until a whole window has turned without one", async () => {
    vi.useFakeTimers();
    const clock = BreakerClock.forWindow(1_000); // ten buckets of 100 ms
    let turns = 0;
    clock.emitter.on("rotate", () => turns++);
    expect(clock.turning).toBe(false);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(turns).toBe(0); // idle from the start: no timer at all
    clock.touch();
    await vi.advanceTimersByTimeAsync(550);
    clock.touch(); // a submit ends: ten more turns from here
    await vi.advanceTimersByTimeAsync(2_000);
    expect(turns).toBe(15);
    expect(clock.turning).toBe(false);
    clock.touch();
    await vi.advanceTimersByTimeAsync(300);
    expect(turns).toBe(18);
    clock.stop();
    expect(clock.turning).toBe(false);
  });

  it("empties a breaker's window before it stops, so the breaker forgets failures as before", async () => {
    vi.useFakeTimers();
    const clock = BreakerClock.forWindow(1_000);
    const breaker = new CircuitBreaker(async () => Promise.reject(new Error("carrier down")), {
      timeout: false,
      errorThresholdPercentage: 50,
      volumeThreshold: 100,
      rollingCountTimeout: 1_000,
      rollingCountBuckets: clock.buckets,
      rotateBucketController: clock.emitter,
      enableSnapshots: false,
    });
    for (let i = 0; i < 5; i++) {
      clock.touch();
      await breaker.fire().catch(() => {});
      clock.touch();
    }
    expect(breaker.stats.failures).toBe(5);
    await vi.advanceTimersByTimeAsync(500);
    expect(breaker.stats.failures).toBe(5); // still within the window
    await vi.advanceTimersByTimeAsync(600);
    expect(breaker.stats.failures).toBe(0);
    expect(clock.turning).toBe(false);
    breaker.shutdown();
    expect(clock.emitter.listenerCount("rotate")).toBe(0);
  });
});
