import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SmscIdFormat } from "../../carriers/index.ts";
import {
  canonicalSmscId,
  formatSmscId,
  MAX_STORED_ID_LENGTH,
  numberCandidates,
  numberKey,
  readSmscId,
  recordedSubmitId,
  storedNumberKey,
} from "../../src/domain/smsc-id.ts";

const CANONICAL = /^(0|[1-9][0-9]*)$/;
const format = fc.constantFrom<Extract<SmscIdFormat, "hex" | "decimal">>("hex", "decimal");

describe("readSmscId", () => {
  it("keeps opaque ids exactly as written: UUIDs, 64 hex characters, base36, leading zeros, case", () => {
    for (const id of [
      "9b2f6c1e-3d4a-4f5b-a6c7-d8e9f0a1b2c3",
      "a".repeat(64),
      "0z9y8x",
      "000123",
      "AbC",
      " padded ",
    ])
      for (const fmt of ["auto", "string"] as const) expect(readSmscId(id, fmt)).toEqual({ ok: true, id });
  });

  it("refuses empty ids and ids longer than 65 characters in every format, and non-numbers in numeric ones", () => {
    for (const fmt of ["auto", "string", "hex", "decimal"] as const) {
      expect(readSmscId("", fmt)).toEqual({ ok: false, reason: "empty" });
      expect(readSmscId("1".repeat(66), fmt)).toEqual({ ok: false, reason: "too_long" });
      expect(readSmscId("1".repeat(65), fmt).ok).toBe(true);
    }
    expect(readSmscId("   ", "hex")).toEqual({ ok: false, reason: "empty" });
    expect(readSmscId("9b2f-6c1e", "hex")).toEqual({ ok: false, reason: "unreadable" });
    expect(readSmscId("0z9y8x", "decimal")).toEqual({ ok: false, reason: "unreadable" });
  });

  it("reads numeric ids as their decimal value, so hex and decimal writings of one number match", () => {
    expect(readSmscId("00A1B2C3", "hex")).toEqual({ ok: true, id: "10597059" });
    expect(readSmscId("0010597059", "decimal")).toEqual({ ok: true, id: "10597059" });
  });
});

describe("canonicalSmscId, examples", () => {
  it.each([
    ["1F4", "hex", "500"],
    ["1f4", "hex", "500"],
    ["0001f4", "hex", "500"],
    [" 1F4\n", "hex", "500"],
    ["500", "decimal", "500"],
    ["000500", "decimal", "500"],
    ["0", "decimal", "0"],
    ["0000", "hex", "0"],
    ["FFFFFFFFFFFFFFFFFFFF", "hex", "1208925819614629174706175"],
    ["10", "hex", "16"],
    ["10", "decimal", "10"],
  ] as const)("reads %j (%s) as %s", (raw, fmt, expected) => {
    expect(canonicalSmscId(raw, fmt)).toBe(expected);
  });

  it("matches a hex submit_sm_resp id with the same message's decimal receipt id", () => {
    expect(canonicalSmscId("00A1B2C3", "hex")).toBe(canonicalSmscId("10597059", "decimal"));
  });

  it.each([
    ["", "hex"],
    ["   ", "decimal"],
    ["0x1F4", "hex"],
    ["1F4", "decimal"],
    ["-5", "decimal"],
    ["+5", "decimal"],
    ["1 4", "decimal"],
    ["12.5", "decimal"],
    ["1g", "hex"],
    ["٣", "decimal"],
    ["1e3", "decimal"],
  ] as const)("rejects %j (%s)", (raw, fmt) => {
    expect(canonicalSmscId(raw, fmt)).toBeNull();
  });

  it("accepts 65 characters, the SMPP message_id maximum, and rejects 66", () => {
    expect(canonicalSmscId("f".repeat(65), "hex")).toBe((16n ** 65n - 1n).toString());
    expect(canonicalSmscId("f".repeat(66), "hex")).toBeNull();
    expect(canonicalSmscId("9".repeat(65), "decimal")).toBe("9".repeat(65));
    expect(canonicalSmscId(`0${"9".repeat(65)}`, "decimal")).toBeNull();
  });
});

describe("formatSmscId, examples", () => {
  it("writes hex in lower case by default, upper case and zero padding on request", () => {
    expect(formatSmscId(500n, "hex")).toBe("1f4");
    expect(formatSmscId(500n, "hex", { upperCase: true })).toBe("1F4");
    expect(formatSmscId(500n, "hex", { upperCase: true, padTo: 8 })).toBe("000001F4");
    expect(formatSmscId(500n, "decimal", { padTo: 10 })).toBe("0000000500");
    expect(formatSmscId(0n, "decimal")).toBe("0");
  });

  it("refuses negative values and ids longer than 65 characters", () => {
    expect(() => formatSmscId(-1n, "decimal")).toThrow(RangeError);
    expect(() => formatSmscId(10n ** 65n, "decimal")).toThrow(/exceeds 65/);
    expect(() => formatSmscId(1n, "hex", { padTo: 66 })).toThrow(/exceeds 65/);
    expect(formatSmscId(1n, "hex", { padTo: 65 })).toHaveLength(65);
  });
});

describe("smsc ids, properties", () => {
  const value = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n }), fc.bigInt({ min: 0n, max: 10n ** 60n }));
  const ws = fc.string({ unit: fc.constantFrom(" ", "\t", "\r\n"), maxLength: 2 });

  it("reads back any value written in any case, padding and surrounding whitespace", () => {
    fc.assert(
      fc.property(
        value,
        format,
        fc.boolean(),
        fc.integer({ min: 0, max: 65 }),
        fc.array(fc.boolean(), { maxLength: 65 }),
        ws,
        ws,
        (v, fmt, upperCase, padTo, flips, before, after) => {
          const written = formatSmscId(v, fmt, { upperCase, padTo });
          // Mix the case character by character, as some SMSCs do.
          const mixed = [...written].map((c, i) => (flips[i] ? c.toUpperCase() : c.toLowerCase())).join("");
          expect(canonicalSmscId(written, fmt)).toBe(v.toString());
          expect(canonicalSmscId(`${before}${mixed}${after}`, fmt)).toBe(v.toString());
        },
      ),
      { numRuns: 500 },
    );
  });

  it("accepts exactly the strings of allowed digits up to 65 characters, giving a canonical decimal", () => {
    const raw = fc.oneof(
      fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEF"), maxLength: 70 }),
      fc.string({ unit: fc.constantFrom(..."0123456789abcdefxX -+."), maxLength: 20 }),
      fc.string({ maxLength: 10 }),
    );
    fc.assert(
      fc.property(raw, format, (r, fmt) => {
        const id = r.trim();
        const allowed = fmt === "hex" ? /^[0-9a-fA-F]{1,65}$/ : /^[0-9]{1,65}$/;
        const canonical = canonicalSmscId(r, fmt);
        if (!allowed.test(id)) {
          expect(canonical).toBeNull();
          return;
        }
        expect(canonical).toMatch(CANONICAL);
        expect(BigInt(canonical ?? "-1")).toBe(BigInt(fmt === "hex" ? `0x${id}` : id));
        // The canonical form is a fixed point when read as decimal.
        expect(canonicalSmscId(canonical ?? "", "decimal")).toBe(canonical);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("recordedSubmitId: an acceptance is recorded whatever its id holds", () => {
  it("keeps a usable id as read, and an unusable one as it came (bounded), saying why", () => {
    expect(recordedSubmitId("wpzmh100012j", "auto")).toEqual({ id: "wpzmh100012j", unusable: null });
    expect(recordedSubmitId("00A1B2C3", "hex")).toEqual({ id: "10597059", unusable: null });
    expect(recordedSubmitId("", "auto")).toEqual({ id: "", unusable: "empty" });
    expect(recordedSubmitId("x".repeat(70), "auto")).toEqual({ id: "x".repeat(70), unusable: "too_long" });
    expect(recordedSubmitId("y".repeat(400), "string").id).toHaveLength(MAX_STORED_ID_LENGTH);
    expect(recordedSubmitId("wpzmh1", "hex")).toEqual({ id: "wpzmh1", unusable: "unreadable" });
  });
});

describe("number keys: the same number written another way", () => {
  it("writes a number in lower case without leading zeros, and has none for other ids", () => {
    expect(numberKey("000A1B2C3")).toBe("a1b2c3");
    expect(numberKey("0000")).toBe("0");
    expect(numberKey("12345")).toBe("12345");
    for (const id of ["", "wpzmh100012j", "9b2f6c1e-3d4a", "12 34", "f".repeat(66)])
      expect(numberKey(id)).toBeNull();
    expect(storedNumberKey("a1b2c3")).toBeNull();
    expect(storedNumberKey("00A1B2C3")).toBe("a1b2c3");
  });

  it("names the relation of each key a receipt id may stand for", () => {
    expect(numberCandidates("10597059")).toEqual([
      { key: "10597059", relation: "same_number", shown: true },
      { key: "a1b2c3", relation: "hex_to_decimal", shown: true },
      { key: "274296921", relation: "decimal_to_hex", shown: false },
    ]);
    expect(numberCandidates("00A1B2C3")).toEqual([
      { key: "a1b2c3", relation: "same_number", shown: true },
      { key: "10597059", relation: "decimal_to_hex", shown: true },
    ]);
    expect(numberCandidates("7")).toEqual([{ key: "7", relation: "same_number", shown: true }]);
    expect(numberCandidates("wpzmh100012j")).toEqual([]);
  });

  it("shows a cross-base reading only where a hex letter proves the hex side: digits alone are a guess", () => {
    // 28673 is 0x7001: the answer 7001 could be decimal seven thousand and one.
    expect(numberCandidates("28673")).toContainEqual({
      key: "7001",
      relation: "hex_to_decimal",
      shown: false,
    });
    expect(numberCandidates("7001")).toContainEqual({
      key: "28673",
      relation: "decimal_to_hex",
      shown: false,
    });
    expect(numberCandidates("7a01")).toContainEqual({
      key: "31233",
      relation: "decimal_to_hex",
      shown: true,
    });
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n }), (v) => {
        const hex = v.toString(16);
        const found = numberCandidates(v.toString(10)).find((c) => c.relation === "hex_to_decimal");
        if (found) expect(found.shown).toBe(/[a-f]/.test(hex));
      }),
    );
  });

  it("finds every writing of a number from every other: hex and decimal, any case and padding", () => {
    const writing = fc.record({
      base: format,
      upperCase: fc.boolean(),
      padTo: fc.integer({ min: 0, max: 24 }),
    });
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n }), writing, writing, (v, answer, receipt) => {
        const answered = formatSmscId(v, answer.base, answer);
        const receipted = formatSmscId(v, receipt.base, receipt);
        // The segment is indexed under its number key; the receipt's candidates must include it,
        // and the relation must say which bases were used.
        const found = numberCandidates(receipted).find((c) => c.key === numberKey(answered));
        expect(found).toBeDefined();
        if (
          answer.base === "hex" &&
          receipt.base === "decimal" &&
          numberKey(answered) !== numberKey(receipted)
        )
          expect(found?.relation).toBe("hex_to_decimal");
      }),
      { numRuns: 1000 },
    );
  });
});
