import { describe, expect, it } from "vitest";
import { KEY_KEPT_MS, KeyCache, keyChangesSettled } from "../../src/accounts/key-cache.ts";

/** A cache on a clock the test moves. */
function cacheAt(options: { keptMs?: number; maxEntries?: number } = {}) {
  let now = 1_000;
  const cache = new KeyCache<string>({
    keptMs: options.keptMs ?? 250,
    maxEntries: options.maxEntries ?? 10,
    now: () => now,
  });
  return { cache, advance: (ms: number) => (now += ms) };
}

describe("KeyCache", () => {
  it("answers for keptMs counted from before the lookup began, then asks again", () => {
    const { cache, advance } = cacheAt();
    const began = cache.lookupBegins();
    advance(100); // the lookup's round trip
    cache.keep("shr_a", "key a", began);
    expect(cache.get("shr_a")).toBe("key a");
    advance(149);
    expect(cache.get("shr_a")).toBe("key a");
    advance(1);
    expect(cache.get("shr_a")).toBeUndefined();
  });

  it("does not keep an answer whose lookup began keptMs ago or more", () => {
    const { cache, advance } = cacheAt();
    const began = cache.lookupBegins();
    advance(250);
    cache.keep("shr_a", "key a", began);
    expect(cache.get("shr_a")).toBeUndefined();
  });

  it("knows only the tokens it was given", () => {
    const { cache } = cacheAt();
    cache.keep("shr_a", "key a", cache.lookupBegins());
    expect(cache.get("shr_b")).toBeUndefined();
  });

  it("a newer lookup replaces an older one and counts from its own beginning", () => {
    const { cache, advance } = cacheAt();
    cache.keep("shr_a", "old", cache.lookupBegins());
    advance(200);
    cache.keep("shr_a", "new", cache.lookupBegins());
    advance(100);
    expect(cache.get("shr_a")).toBe("new");
  });

  it("beyond maxEntries, lets the longest kept go first", () => {
    const { cache, advance } = cacheAt({ maxEntries: 2 });
    cache.keep("shr_a", "a", cache.lookupBegins());
    advance(1);
    cache.keep("shr_b", "b", cache.lookupBegins());
    advance(1);
    cache.keep("shr_a", "a again", cache.lookupBegins());
    advance(1);
    cache.keep("shr_c", "c", cache.lookupBegins());
    expect(cache.get("shr_b")).toBeUndefined();
    expect(cache.get("shr_a")).toBe("a again");
    expect(cache.get("shr_c")).toBe("c");
  });
});

describe("keyChangesSettled", () => {
  it("waits at least as long as any process keeps a key", async () => {
    for (let round = 0; round < 5; round++) {
      const called = performance.now();
      await keyChangesSettled();
      expect(performance.now() - called).toBeGreaterThanOrEqual(KEY_KEPT_MS);
    }
  });
});
