import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  chooseEncoding,
  countSegments,
  decodeGsm7,
  decodeUcs2,
  encodeGsm7,
  encodeUcs2,
  splitSegments,
} from "../../src/domain/segments.ts";

// The oracle is written out here independently of the implementation's table, so a typo in either
// shows up as a failure instead of agreeing with itself.
/** GSM 03.38 basic table in septet order; null marks 0x1B, the escape. */
const BASIC: ReadonlyArray<string | null> = [
  ..."@£$¥èéùìòÇ\nØø\rÅå",
  ..."Δ_ΦΓΛΩΠΨΣΘΞ",
  null,
  ..."ÆæßÉ",
  ...` !"#¤%&'()*+,-./`,
  ..."0123456789:;<=>?",
  ..."¡ABCDEFGHIJKLMNO",
  ..."PQRSTUVWXYZÄÖÑÜ§",
  ..."¿abcdefghijklmno",
  ..."pqrstuvwxyzäöñüà",
];
const EXTENSION: Readonly<Record<string, number>> = {
  "\f": 0x0a,
  "^": 0x14,
  "{": 0x28,
  "}": 0x29,
  "\\": 0x2f,
  "[": 0x3c,
  "~": 0x3d,
  "]": 0x3e,
  "|": 0x40,
  "€": 0x65,
};
const BASIC_CHARS = BASIC.filter((c): c is string => c !== null);
const EXTENSION_CHARS = Object.keys(EXTENSION);

function septets(text: string): number {
  let n = 0;
  for (const ch of text) n += ch in EXTENSION ? 2 : 1;
  return n;
}

function unitsOf(part: string, encoding: "gsm7" | "ucs2"): number {
  return encoding === "gsm7" ? septets(part) : part.length;
}

const isHigh = (u: number): boolean => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number): boolean => u >= 0xdc00 && u <= 0xdfff;

// Weighted towards extension characters so escape pairs land on part boundaries often.
const gsmChar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...BASIC_CHARS) },
  { weight: 1, arbitrary: fc.constantFrom(...EXTENSION_CHARS) },
);
const gsmText = fc.oneof(
  fc.string({ unit: gsmChar, maxLength: 40 }),
  fc.string({ unit: gsmChar, minLength: 140, maxLength: 330 }),
  fc.string({ unit: gsmChar, maxLength: 800 }),
);
// Weighted towards astral characters so surrogate pairs land on part boundaries often.
const ucs2Char = fc.oneof(
  { weight: 2, arbitrary: gsmChar },
  { weight: 2, arbitrary: fc.constantFrom("ж", "ç", "`", "’", "😀", "🇿🇼", "𝄞") },
  { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
);
const wellFormedText = fc.oneof(
  gsmText,
  fc.string({ unit: ucs2Char, minLength: 60, maxLength: 220 }),
  fc.string({ unit: ucs2Char, maxLength: 600 }),
  fc.string({ unit: "grapheme", maxLength: 300 }),
);
// Lone surrogates are malformed but can arrive in JSON ("\ud83d"); they must not break splitting.
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u));
const anyText = fc.oneof(
  wellFormedText,
  fc.string({ unit: fc.oneof(ucs2Char, loneSurrogate), minLength: 60, maxLength: 300 }),
);

describe("chooseEncoding", () => {
  it("treats every character of the GSM 03.38 basic table as gsm7", () => {
    expect(BASIC_CHARS).toHaveLength(127);
    expect(BASIC_CHARS.filter((c) => chooseEncoding(c) !== "gsm7")).toEqual([]);
    expect(chooseEncoding(BASIC_CHARS.join(""))).toBe("gsm7");
  });

  it("treats every extension-table character as gsm7", () => {
    expect(EXTENSION_CHARS.filter((c) => chooseEncoding(c) !== "gsm7")).toEqual([]);
  });

  it.each([
    ["backtick", "`"],
    ["lower-case c cedilla", "ç"],
    ["curly apostrophe", "’"],
    ["e circumflex", "ê"],
    ["a acute", "á"],
    ["tab", "\t"],
    ["NUL", "\u0000"],
    ["raw escape", "\u001b"],
    ["ohm sign (not Greek omega)", "\u2126"],
    ["emoji", "😀"],
    ["Shona/Ndebele text with a non-GSM letter", "Ŋ"],
  ])("treats %s as ucs2", (_name, ch) => {
    expect(chooseEncoding(ch)).toBe("ucs2");
  });

  it("flips a whole message to ucs2 for one non-GSM character", () => {
    expect(chooseEncoding("Mhoro, wakadini? Price: $5 {ok}")).toBe("gsm7");
    expect(chooseEncoding("Mhoro, wakadini? Price: $5 {ok}`")).toBe("ucs2");
    expect(countSegments(`${"a".repeat(159)}ç`)).toEqual({ encoding: "ucs2", segments: 3, units: 160 });
  });

  it("is gsm7 for the empty string", () => {
    expect(chooseEncoding("")).toBe("gsm7");
  });
});

describe("encodeGsm7 / decodeGsm7", () => {
  it("writes the basic table as its septet positions, one per byte", () => {
    const expected = BASIC.flatMap((c, code) => (c === null ? [] : [code]));
    expect([...encodeGsm7(BASIC_CHARS.join(""))]).toEqual(expected);
  });

  it("writes extension characters as escape 0x1B then their code", () => {
    for (const [ch, code] of Object.entries(EXTENSION)) {
      expect([...encodeGsm7(ch)], ch).toEqual([0x1b, code]);
    }
    expect([...encodeGsm7("a€b")]).toEqual([0x61, 0x1b, 0x65, 0x62]);
  });

  it("throws on a character outside GSM 03.38", () => {
    expect(() => encodeGsm7("abc`")).toThrow(/U\+0060 at index 3/);
    expect(() => encodeGsm7("😀")).toThrow(/not in the GSM 03.38 alphabet/);
  });

  it("decodes escape + unknown code as the basic character and escape + escape as a space", () => {
    expect(decodeGsm7(Buffer.from([0x1b, 0x41]))).toBe("A");
    expect(decodeGsm7(Buffer.from([0x61, 0x1b, 0x1b, 0x62]))).toBe("a b");
  });

  it("rejects bytes that are not septets and an unfinished escape", () => {
    expect(() => decodeGsm7(Buffer.from([0x80]))).toThrow(/not a GSM-7 septet/);
    expect(() => decodeGsm7(Buffer.from([0x61, 0x1b]))).toThrow(/unfinished escape/);
    expect(() => decodeGsm7(Buffer.from([0x1b, 0xff]))).toThrow(/not a GSM-7 septet/);
  });

  it("round-trips any GSM-7 text, one byte per septet", () => {
    fc.assert(
      fc.property(gsmText, (text) => {
        const bytes = encodeGsm7(text);
        expect(bytes.length).toBe(septets(text));
        expect(decodeGsm7(bytes)).toBe(text);
      }),
    );
  });
});

describe("encodeUcs2 / decodeUcs2", () => {
  it("writes UTF-16BE, surrogate pairs included", () => {
    expect([...encodeUcs2("A€😀")]).toEqual([0x00, 0x41, 0x20, 0xac, 0xd8, 0x3d, 0xde, 0x00]);
  });

  it("rejects an odd number of bytes", () => {
    expect(() => decodeUcs2(Buffer.from([0x00, 0x41, 0x00]))).toThrow(/odd/);
  });

  it("round-trips any text", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const bytes = encodeUcs2(text);
        expect(bytes.length).toBe(text.length * 2);
        expect(decodeUcs2(bytes)).toBe(text);
      }),
    );
  });
});

describe("countSegments / splitSegments, examples", () => {
  it("sends the empty text as one empty segment", () => {
    expect(countSegments("")).toEqual({ encoding: "gsm7", segments: 1, units: 0 });
    expect(splitSegments("")).toEqual({ encoding: "gsm7", parts: [""] });
  });

  it("fits 160 septets in one segment and splits 161 into 153 + 8", () => {
    expect(countSegments("a".repeat(160))).toEqual({ encoding: "gsm7", segments: 1, units: 160 });
    expect(countSegments("a".repeat(161))).toEqual({ encoding: "gsm7", segments: 2, units: 161 });
    expect(splitSegments("a".repeat(161)).parts.map((p) => p.length)).toEqual([153, 8]);
  });

  it("uses 153-septet parts", () => {
    expect(countSegments("a".repeat(306)).segments).toBe(2);
    expect(countSegments("a".repeat(307)).segments).toBe(3);
    expect(splitSegments("a".repeat(307)).parts.map((p) => p.length)).toEqual([153, 153, 1]);
  });

  it("counts € and [ as two septets", () => {
    expect(countSegments("€")).toEqual({ encoding: "gsm7", segments: 1, units: 2 });
    expect(countSegments("[")).toEqual({ encoding: "gsm7", segments: 1, units: 2 });
    expect(countSegments("€".repeat(80))).toEqual({ encoding: "gsm7", segments: 1, units: 160 });
    expect(countSegments(`${"[".repeat(80)}a`)).toEqual({ encoding: "gsm7", segments: 2, units: 161 });
  });

  it("never splits an escape pair: 152 plain characters then € moves € to the next part", () => {
    const text = `${"a".repeat(152)}€${"b".repeat(10)}`;
    expect(splitSegments(text).parts).toEqual(["a".repeat(152), `€${"b".repeat(10)}`]);
  });

  it("counts segments from the real split, not ceil(septets / 153)", () => {
    // 306 septets would be 2 parts if escapes could be split; the escape pushes 1 septet to a third part.
    const text = `${"a".repeat(152)}€${"b".repeat(152)}`;
    expect(countSegments(text)).toEqual({ encoding: "gsm7", segments: 3, units: 306 });
    expect(splitSegments(text).parts).toEqual(["a".repeat(152), `€${"b".repeat(151)}`, "b"]);
  });

  it("fits 70 UCS-2 code units in one segment and splits 71 into 67 + 4", () => {
    expect(countSegments("ж".repeat(70))).toEqual({ encoding: "ucs2", segments: 1, units: 70 });
    expect(countSegments("ж".repeat(71))).toEqual({ encoding: "ucs2", segments: 2, units: 71 });
    expect(splitSegments("ж".repeat(71)).parts.map((p) => p.length)).toEqual([67, 4]);
    expect(countSegments("ж".repeat(134)).segments).toBe(2);
    expect(countSegments("ж".repeat(135)).segments).toBe(3);
  });

  it("keeps an emoji whole when its high surrogate would be code unit 67", () => {
    const text = `${"ж".repeat(66)}😀${"ж".repeat(10)}`;
    expect(splitSegments(text).parts).toEqual(["ж".repeat(66), `😀${"ж".repeat(10)}`]);
  });

  it("lets an emoji occupy code units 66 and 67 of a part", () => {
    const text = `${"ж".repeat(65)}😀${"ж".repeat(10)}`;
    expect(splitSegments(text).parts).toEqual([`${"ж".repeat(65)}😀`, "ж".repeat(10)]);
  });

  it("counts UCS-2 segments from the real split, not ceil(units / 67)", () => {
    const text = `${"ж".repeat(66)}😀${"ж".repeat(66)}`;
    expect(countSegments(text)).toEqual({ encoding: "ucs2", segments: 3, units: 134 });
  });

  it("counts an emoji as two code units", () => {
    expect(countSegments("😀".repeat(35))).toEqual({ encoding: "ucs2", segments: 1, units: 70 });
    expect(countSegments("😀".repeat(36))).toEqual({ encoding: "ucs2", segments: 2, units: 72 });
    expect(splitSegments("😀".repeat(36)).parts).toEqual(["😀".repeat(33), "😀".repeat(3)]);
  });
});

describe("countSegments / splitSegments, properties", () => {
  const runs = { numRuns: 500 };

  it("parts join back to the text, and count and split agree", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const { encoding, parts } = splitSegments(text);
        const plan = countSegments(text);
        expect(parts.join("")).toBe(text);
        expect(parts.length).toBe(plan.segments);
        expect(encoding).toBe(plan.encoding);
        expect(encoding).toBe(chooseEncoding(text));
      }),
      runs,
    );
  });

  it("reports units as septets for gsm7 and UTF-16 code units for ucs2", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const plan = countSegments(text);
        expect(plan.units).toBe(plan.encoding === "gsm7" ? encodeGsm7(text).length : text.length);
      }),
      runs,
    );
  });

  it("every part fits: ≤160/≤70 when single, ≤153/≤67 and non-empty when multipart", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const { encoding, parts } = splitSegments(text);
        const single = encoding === "gsm7" ? 160 : 70;
        const part = encoding === "gsm7" ? 153 : 67;
        if (parts.length === 1) {
          expect(unitsOf(parts[0] ?? "", encoding)).toBeLessThanOrEqual(single);
          return;
        }
        for (const p of parts) {
          expect(p.length).toBeGreaterThan(0);
          expect(unitsOf(p, encoding)).toBeLessThanOrEqual(part);
        }
      }),
      runs,
    );
  });

  it("uses one segment exactly when the units fit the single-segment limit", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const plan = countSegments(text);
        const single = plan.encoding === "gsm7" ? 160 : 70;
        expect(plan.segments === 1).toBe(plan.units <= single);
      }),
      runs,
    );
  });

  it("fills parts greedily: the next part's first character would not have fitted", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const { encoding, parts } = splitSegments(text);
        const limit = encoding === "gsm7" ? 153 : 67;
        for (let i = 0; i + 1 < parts.length; i++) {
          const next = parts[i + 1] ?? "";
          const nextFirst =
            isHigh(next.charCodeAt(0)) && isLow(next.charCodeAt(1)) ? next.slice(0, 2) : next[0];
          expect(unitsOf(`${parts[i]}${nextFirst}`, encoding)).toBeGreaterThan(limit);
        }
      }),
      runs,
    );
  });

  it("never leaves a lone surrogate at a part edge of well-formed text", () => {
    fc.assert(
      fc.property(wellFormedText, (text) => {
        for (const p of splitSegments(text).parts) {
          expect(isLow(p.charCodeAt(0))).toBe(false);
          expect(isHigh(p.charCodeAt(p.length - 1))).toBe(false);
        }
      }),
      runs,
    );
  });

  it("never splits a surrogate pair, even in text with lone surrogates", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const parts = splitSegments(text).parts;
        for (let i = 0; i + 1 < parts.length; i++) {
          const left = parts[i] ?? "";
          const right = parts[i + 1] ?? "";
          const brokenPair = isHigh(left.charCodeAt(left.length - 1)) && isLow(right.charCodeAt(0));
          expect(brokenPair).toBe(false);
        }
      }),
      runs,
    );
  });

  it("every gsm7 part fits the wire limit in encoded bytes, escapes included", () => {
    fc.assert(
      fc.property(gsmText, (text) => {
        const { encoding, parts } = splitSegments(text);
        expect(encoding).toBe("gsm7");
        const limit = parts.length === 1 ? 160 : 153;
        for (const p of parts) expect(encodeGsm7(p).length).toBeLessThanOrEqual(limit);
        expect(decodeGsm7(Buffer.concat(parts.map((p) => encodeGsm7(p))))).toBe(text);
      }),
      runs,
    );
  });
});
