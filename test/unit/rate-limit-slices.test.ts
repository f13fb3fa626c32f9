import { describe, expect, it } from "vitest";
import type { DecisionWithSlices, LimitWithSlice, RateLimitRequest } from "../../src/limits/rate-limits.ts";
import { type BucketId, SliceBook } from "../../src/limits/slices.ts";

/** The slices' arithmetic on a clock of the test's own (ms): no database, no timers. */
const LIFETIME = 200;
const request: RateLimitRequest = { keyId: "k1", accountId: "a1", recipients: 0 };
const send = (recipients: number): RateLimitRequest => ({ ...request, recipients });

function limit(
  scope: LimitWithSlice["scope"],
  slice: number,
  extra: Partial<LimitWithSlice> = {},
): LimitWithSlice {
  const quota = scope === "recipients" ? 6000 : 1000;
  return {
    scope,
    quota,
    windowSeconds: scope === "recipients" ? 60 : 1,
    remaining: quota - 1,
    resetMs: 1,
    retryMs: 0,
    slice,
    ...extra,
  };
}

const allowed = (...limits: LimitWithSlice[]): DecisionWithSlices => ({ allowed: true, limits });

describe("SliceBook", () => {
  it("decides nothing before the database granted a slice", () => {
    const book = new SliceBook(LIFETIME);
    book.record(request, 0);
    expect(book.decide(request, 0)).toBeNull();
  });

  it("admits exactly the slice's units, then leaves the next request to the database", () => {
    const book = new SliceBook(LIFETIME);
    // The key's limit does not apply (absent from the answer); the account's slice is 3.
    book.apply(request, allowed(limit("account", 3, { remaining: 999 })), 0);
    const decided = [1, 2, 3, 4].map(() => book.decide(request, 10));
    expect(decided.map((d) => d !== null)).toEqual([true, true, true, false]);
    // Remaining: the bucket after the slice (996) plus what is left of the slice here.
    expect(decided.slice(0, 3).map((d) => d?.limits[0]?.remaining)).toEqual([998, 997, 996]);
    expect(decided[0]).toMatchObject({
      allowed: true,
      limits: [{ scope: "account", quota: 1000, retryMs: 0 }],
    });
  });

  it("needs a slice of every bucket the request takes from, and takes from none when one is short", () => {
    const book = new SliceBook(LIFETIME);
    book.apply(send(5), allowed(limit("account", 10), limit("recipients", 4)), 0);
    expect(book.decide(send(5), 1)).toBeNull();
    // The account's slice was not touched by the refused local attempt: ten requests of 0 recipients fit.
    const plain = Array.from({ length: 11 }, () => book.decide(request, 1));
    expect(plain.filter((d) => d !== null)).toHaveLength(10);
  });

  it("serves a slice for one lifetime from when it was asked for, then gives its rest back", () => {
    const book = new SliceBook(LIFETIME);
    book.apply(request, allowed(limit("account", 10)), 100);
    expect(book.decide(request, 299)).not.toBeNull();
    expect(book.decide(request, 300)).toBeNull();
    expect(book.sweep(299)).toEqual([]);
    expect(book.sweep(300)).toEqual([{ subject: "account:a1", scope: "account", units: 9 }]);
    expect(book.sweep(301)).toEqual([]);
  });

  it("gives back a recipients slice's rest to the account's row, in recipients", () => {
    const book = new SliceBook(LIFETIME);
    book.apply(send(1), allowed(limit("recipients", 50)), 0);
    expect(book.sweep(LIFETIME)).toEqual([{ subject: "account:a1", scope: "recipients", units: 50 }]);
  });

  it("takes a failed send's recipients back into a live slice, not after it ended", () => {
    const book = new SliceBook(LIFETIME);
    // Only the recipients limit applies to this account.
    book.apply(send(1), allowed(limit("recipients", 5)), 0);
    expect(book.decide(send(5), 1)).not.toBeNull();
    expect(book.giveBackRecipients("a1", 5, 2)).toBe(true);
    expect(book.decide(send(5), 3)).not.toBeNull();
    expect(book.giveBackRecipients("a1", 5, LIFETIME)).toBe(false);
    expect(book.giveBackRecipients("other", 5, 4)).toBe(false);
  });

  it("merges a new slice with a live one's rest, keeping the older end", () => {
    const book = new SliceBook(LIFETIME);
    book.apply(request, allowed(limit("account", 2)), 0);
    book.apply(request, allowed(limit("account", 5)), 50);
    expect(book.sweep(LIFETIME)).toEqual([{ subject: "account:a1", scope: "account", units: 7 }]);
  });

  it("gives back an ended slice's rest when a new slice replaces it", () => {
    const book = new SliceBook(LIFETIME);
    book.apply(request, allowed(limit("account", 4)), 0);
    book.apply(request, allowed(limit("account", 5)), LIFETIME + 10);
    expect(book.sweep(LIFETIME + 11)).toEqual([{ subject: "account:a1", scope: "account", units: 4 }]);
    expect(book.decide(request, LIFETIME + 12)).not.toBeNull();
  });

  it("with no limit at all, decides alone for a lifetime; a limit that appears ends that", () => {
    const book = new SliceBook(LIFETIME);
    book.apply(request, allowed(), 0);
    expect(book.decide(request, 10)).toEqual({ allowed: true, limits: [] });
    // A send's recipients were never asked about.
    expect(book.decide(send(1), 10)).toBeNull();
    expect(book.decide(request, LIFETIME)).toBeNull();
    book.apply(request, allowed(), LIFETIME);
    book.apply(request, allowed(limit("account", 0)), LIFETIME + 1);
    expect(book.decide(request, LIFETIME + 2)).toBeNull();
  });

  it("asks for what this process used of a bucket in the last lifetime, once per statement, and nothing below 2", () => {
    const book = new SliceBook(LIFETIME);
    book.record(request, 0);
    expect(book.wants(request, 0, new Set())).toEqual({ key: 0, account: 0, recipients: 0 });
    for (let i = 0; i < 9; i++) book.record(request, 10 + i);
    const asked = new Set<BucketId>();
    expect(book.wants(request, 20, asked)).toEqual({ key: 10, account: 10, recipients: 0 });
    expect(book.wants(request, 20, asked)).toEqual({ key: 0, account: 0, recipients: 0 });
    // A lifetime later the previous window still counts; two lifetimes of nothing and it is forgotten.
    expect(book.wants(request, LIFETIME + 20, new Set())).toMatchObject({ account: 10 });
    expect(book.wants(request, 3 * LIFETIME, new Set())).toMatchObject({ account: 0 });
  });

  it("asks for no slice of a bucket whose live slice covers the request", () => {
    const book = new SliceBook(LIFETIME);
    for (let i = 0; i < 5; i++) book.record(send(10), i);
    // The key's limit applies but granted no slice.
    book.apply(send(10), allowed(limit("key", 0), limit("account", 3), limit("recipients", 20)), 0);
    expect(book.wants(send(10), 5, new Set())).toEqual({ key: 5, account: 0, recipients: 0 });
    expect(book.wants(send(30), 5, new Set())).toEqual({ key: 5, account: 0, recipients: 50 });
  });
});
