import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LOOK_ALIKES, smartEncode } from "../../src/domain/look-alikes.ts";
import { chooseEncoding, countSegments } from "../../src/domain/segments.ts";

describe("the look-alike table", () => {
  it("lists each character once, none of them GSM-7, each replaced by GSM-7 text", () => {
    expect(new Set(LOOK_ALIKES.map((e) => e.char)).size).toBe(LOOK_ALIKES.length);
    for (const e of LOOK_ALIKES) {
      expect(e.char).toHaveLength(1);
      expect(chooseEncoding(e.char), e.name).toBe("ucs2");
      expect(chooseEncoding(e.replacement), e.name).toBe("gsm7");
    }
  });

  it("never replaces a letter or a digit (modifier letters, primes and accents in form, are not words)", () => {
    for (const e of LOOK_ALIKES) expect(e.char, e.name).not.toMatch(/[\p{Lu}\p{Ll}\p{Lt}\p{Lo}\p{N}]/u);
  });

  it("is the table docs/smart-encoding.md shows, row for row", () => {
    const doc = readFileSync(new URL("../../docs/smart-encoding.md", import.meta.url), "utf8");
    const rows = [...doc.matchAll(/^\|\s*U\+([0-9A-F]{4})\s*\|[^|]*\|([^|]*)\|/gm)].map((m) => ({
      code: m[1],
      replacement: (m[2] ?? "").trim(),
    }));
    const shown = (r: string) => (r === "" ? "(nothing)" : `\`${r}\``);
    expect(rows).toEqual(
      LOOK_ALIKES.map((e) => ({
        code: (e.char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0"),
        replacement: shown(e.replacement),
      })),
    );
  });
});

describe("smartEncode", () => {
  it("replaces the look-alikes of a text that then fits GSM-7, and counts them", () => {
    const written = "Don\u2019t forget \u2013 your \u201Ccode\u201D is 1234\u2026";
    expect(chooseEncoding(written)).toBe("ucs2");
    expect(smartEncode(written)).toEqual({ text: `Don't forget - your "code" is 1234...`, replaced: 5 });
  });

  it("saves segments: 150 characters with one curly quote are 3 UCS-2 segments, 1 GSM-7", () => {
    const written = `${"a".repeat(149)}\u2019`;
    expect(countSegments(written).segments).toBe(3);
    const sent = smartEncode(written);
    expect(sent && countSegments(sent.text)).toMatchObject({ encoding: "gsm7", segments: 1 });
  });

  it("leaves a text alone when replacing would need more segments (an ellipsis is three dots)", () => {
    // 70 ellipses: 1 UCS-2 segment as written, 210 GSM-7 characters (2 segments) replaced.
    expect(smartEncode("\u2026".repeat(70))).toBeNull();
    // 670: 10 UCS-2 segments, the most a message may have; replaced it would need 14.
    expect(smartEncode("\u2026".repeat(670))).toBeNull();
    // Fewer, in a longer text: replaced it needs no more segments than as written.
    expect(smartEncode(`${"a".repeat(60)}\u2026`)).toEqual({ text: `${"a".repeat(60)}...`, replaced: 1 });
  });

  it("leaves a text alone when something else keeps it UCS-2 (an emoji, another script)", () => {
    expect(smartEncode("Thanks \u2019 \u{1F600}")).toBeNull();
    expect(smartEncode("\u2018\u041F\u0440\u0438\u0432\u0435\u0442\u2019")).toBeNull();
  });

  it("leaves GSM-7 text and text without look-alikes alone", () => {
    expect(smartEncode("plain text")).toBeNull();
    expect(smartEncode("Mhoro \u{1F44B}")).toBeNull();
  });

  it("drops invisible characters, but never down to an empty text", () => {
    expect(smartEncode("a\u200Bb\uFEFF")).toEqual({ text: "ab", replaced: 2 });
    expect(smartEncode("\u200B\u200B")).toBeNull();
    expect(smartEncode("\u00A0")).toBeNull();
  });
});
