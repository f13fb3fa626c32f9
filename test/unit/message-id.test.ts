import { describe, expect, it } from "vitest";
import { z } from "zod";
import { newMessageId } from "../../src/domain/message-id.ts";

const timeOf = (id: string) => Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);

describe("message ids (UUIDv7)", () => {
  it("are UUIDs of version 7 and the RFC variant, as z.uuid() and the path check accept", () => {
    const id = newMessageId(Date.UTC(2026, 10, 25, 12, 0, 0, 123));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(z.uuid().safeParse(id).success).toBe(true);
  });

  it("carry the time they were made for, to the millisecond", () => {
    for (const at of [0, 1, 65_535, 65_536, Date.UTC(2026, 10, 25, 12, 0, 0, 123), 2 ** 48 - 1])
      expect(timeOf(newMessageId(at))).toBe(at);
  });

  it("sort by time: an id made for a later millisecond sorts after one made earlier", () => {
    const start = Date.UTC(2026, 10, 25);
    const ids = Array.from({ length: 1000 }, (_, i) => newMessageId(start + i * 7));
    expect([...ids].sort()).toEqual(ids);
  });

  it("differ within one millisecond, across many blocks of random bytes", () => {
    const at = Date.UTC(2026, 10, 25);
    const ids = Array.from({ length: 10_000 }, () => newMessageId(at));
    expect(new Set(ids).size).toBe(ids.length);
    // The random part is not a counter: the bits after the version vary in both halves.
    expect(new Set(ids.map((id) => id.slice(15, 18))).size).toBeGreaterThan(1000);
    expect(new Set(ids.map((id) => id.slice(24))).size).toBe(ids.length);
  });

  it("refuse a time a UUIDv7 cannot carry", () => {
    expect(() => newMessageId(-1)).toThrow(RangeError);
    expect(() => newMessageId(2 ** 48)).toThrow(RangeError);
    expect(() => newMessageId(1.5)).toThrow(RangeError);
  });
});
