/**
 * SMS text encoding and segmentation (3GPP TS 23.038 / GSM 03.38 and TS 23.040).
 *
 * One source of truth: splitSegments decides the parts; countSegments is derived from it, so what
 * a client is billed for is exactly what dispatch sends.
 */

export type Encoding = "gsm7" | "ucs2";

export interface SegmentPlan {
  encoding: Encoding;
  segments: number;
  /** Septets for gsm7 (extension characters count 2), UTF-16 code units for ucs2. */
  units: number;
}

/**
 * GSM 03.38 default alphabet, indexed by septet value, 16 per row. Position 0x1B is the escape to
 * the extension table, not a character; ESC_PLACEHOLDER marks it and is skipped when building maps.
 */
const ESC_PLACEHOLDER = "\u0000";
const GSM7_BASIC_TABLE = [
  "@£$¥èéùìòÇ\nØø\rÅå",
  `Δ_ΦΓΛΩΠΨΣΘΞ${ESC_PLACEHOLDER}ÆæßÉ`,
  ` !"#¤%&'()*+,-./`,
  "0123456789:;<=>?",
  "¡ABCDEFGHIJKLMNO",
  "PQRSTUVWXYZÄÖÑÜ§",
  "¿abcdefghijklmno",
  "pqrstuvwxyzäöñüà",
].join("");

/** GSM 03.38 extension table: character → code sent after the escape septet. */
const GSM7_EXTENSION_TABLE: ReadonlyArray<readonly [string, number]> = [
  ["\f", 0x0a],
  ["^", 0x14],
  ["{", 0x28],
  ["}", 0x29],
  ["\\", 0x2f],
  ["[", 0x3c],
  ["~", 0x3d],
  ["]", 0x3e],
  ["|", 0x40],
  ["€", 0x65],
];

const ESCAPE = 0x1b;
const GSM7_SINGLE_LIMIT = 160;
/** 140 octets minus a 6-octet concatenation UDH leaves 153 septets (with fill bits). */
const GSM7_PART_LIMIT = 153;
const UCS2_SINGLE_LIMIT = 70;
/** 140 octets minus the 6-octet UDH leaves 134 octets = 67 UTF-16 code units. */
const UCS2_PART_LIMIT = 67;

const BASIC_CODE = new Map<string, number>();
const BASIC_CHAR: Array<string | undefined> = [];
for (let code = 0; code < GSM7_BASIC_TABLE.length; code++) {
  if (code === ESCAPE) continue;
  const ch = GSM7_BASIC_TABLE.charAt(code);
  BASIC_CODE.set(ch, code);
  BASIC_CHAR[code] = ch;
}
if (GSM7_BASIC_TABLE.length !== 128 || BASIC_CODE.size !== 127) {
  // A typo in the table would silently mis-encode messages; fail at load instead.
  throw new Error("GSM 03.38 basic table must have 128 distinct positions");
}
const EXTENSION_CODE = new Map<string, number>(GSM7_EXTENSION_TABLE);
const EXTENSION_CHAR = new Map<number, string>(GSM7_EXTENSION_TABLE.map(([ch, code]) => [code, ch]));

/** Septets each UTF-16 code unit costs in GSM-7, by code: 0 when it is not representable. */
const GSM7_COST = new Uint8Array(0x10000);
for (const ch of BASIC_CODE.keys()) GSM7_COST[ch.charCodeAt(0)] = 1;
for (const ch of EXTENSION_CODE.keys()) GSM7_COST[ch.charCodeAt(0)] = 2;

/** Septets one UTF-16 code unit costs in GSM-7, or undefined when it is not representable. */
function gsm7Cost(ch: string): 1 | 2 | undefined {
  const cost = GSM7_COST[ch.charCodeAt(0)];
  return cost === 1 || cost === 2 ? cost : undefined;
}

export function chooseEncoding(text: string): Encoding {
  // Every GSM-7 character is in the BMP, so a surrogate code unit is never found and flips to ucs2.
  for (let i = 0; i < text.length; i++) {
    if (GSM7_COST[text.charCodeAt(i)] === 0) return "ucs2";
  }
  return "gsm7";
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

interface Split {
  encoding: Encoding;
  parts: string[];
  units: number;
}

/**
 * Greedy packing of indivisible tokens (a GSM-7 character with its escape, or a UTF-16 surrogate
 * pair) into parts; greedy is optimal for contiguous packing, so the part count is minimal.
 */
function pack(
  text: string,
  tokenCost: (i: number) => { length: number; cost: number },
  encoding: Encoding,
): Split {
  const singleLimit = encoding === "gsm7" ? GSM7_SINGLE_LIMIT : UCS2_SINGLE_LIMIT;
  const partLimit = encoding === "gsm7" ? GSM7_PART_LIMIT : UCS2_PART_LIMIT;
  const tokens: Array<{ start: number; length: number; cost: number }> = [];
  let units = 0;
  for (let i = 0; i < text.length; ) {
    const { length, cost } = tokenCost(i);
    tokens.push({ start: i, length, cost });
    units += cost;
    i += length;
  }
  if (units <= singleLimit) return { encoding, parts: [text], units };

  const parts: string[] = [];
  let partStart = 0;
  let partUnits = 0;
  for (const token of tokens) {
    if (partUnits + token.cost > partLimit) {
      parts.push(text.slice(partStart, token.start));
      partStart = token.start;
      partUnits = 0;
    }
    partUnits += token.cost;
  }
  parts.push(text.slice(partStart));
  return { encoding, parts, units };
}

function split(text: string): Split {
  const encoding = chooseEncoding(text);
  if (encoding === "gsm7") {
    return pack(text, (i) => ({ length: 1, cost: gsm7Cost(text.charAt(i)) ?? 1 }), encoding);
  }
  return pack(
    text,
    (i) => {
      const pair =
        isHighSurrogate(text.charCodeAt(i)) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1));
      // A lone surrogate (malformed input) is still one code unit on the wire.
      return pair ? { length: 2, cost: 2 } : { length: 1, cost: 1 };
    },
    encoding,
  );
}

export function splitSegments(text: string): { encoding: Encoding; parts: string[] } {
  const { encoding, parts } = split(text);
  return { encoding, parts };
}

/**
 * The plan of a text, equal to what splitSegments sends (a property test holds them to each other).
 * One pass without building parts: when no token is two units wide (an escaped GSM-7 character, a
 * surrogate pair), packing is plain division; only a long text with such tokens is split to count.
 * A batch counts thousands of texts, so this is on the send path.
 */
export function countSegments(text: string): SegmentPlan {
  let units = 0;
  let wide = false;
  let encoding: Encoding = "gsm7";
  for (let i = 0; i < text.length; i++) {
    const cost = GSM7_COST[text.charCodeAt(i)] as number;
    if (cost === 0) {
      encoding = "ucs2";
      break;
    }
    units += cost;
    if (cost === 2) wide = true;
  }
  if (encoding === "ucs2") {
    units = text.length;
    wide = SURROGATE_PAIR.test(text);
  }
  const single = encoding === "gsm7" ? GSM7_SINGLE_LIMIT : UCS2_SINGLE_LIMIT;
  const part = encoding === "gsm7" ? GSM7_PART_LIMIT : UCS2_PART_LIMIT;
  if (units <= single) return { encoding, segments: 1, units };
  if (!wide) return { encoding, segments: Math.ceil(units / part), units };
  return { encoding, segments: split(text).parts.length, units };
}

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/;

/** Unpacked septets, one per byte, as SMPP data_coding 0 carries them. */
export function encodeGsm7(text: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text.charAt(i);
    const basic = BASIC_CODE.get(ch);
    if (basic !== undefined) {
      out.push(basic);
      continue;
    }
    const ext = EXTENSION_CODE.get(ch);
    if (ext === undefined) {
      const hex = text.charCodeAt(i).toString(16).padStart(4, "0");
      throw new Error(`character U+${hex.toUpperCase()} at index ${i} is not in the GSM 03.38 alphabet`);
    }
    out.push(ESCAPE, ext);
  }
  return Buffer.from(out);
}

function basicChar(code: number): string {
  const ch = BASIC_CHAR[code];
  if (ch === undefined) throw new Error(`septet 0x${code.toString(16)} has no basic-table character`);
  return ch;
}

/**
 * Inverse of encodeGsm7. Per GSM 03.38, an escape followed by a code the extension table does not
 * define shows the basic-table character, and escape-escape shows a space.
 */
export function decodeGsm7(buf: Buffer): string {
  let out = "";
  for (let i = 0; i < buf.length; i++) {
    const code = buf[i] as number;
    if (code > 0x7f) throw new Error(`byte 0x${code.toString(16)} at index ${i} is not a GSM-7 septet`);
    if (code !== ESCAPE) {
      out += basicChar(code);
      continue;
    }
    const next = buf[i + 1];
    if (next === undefined) throw new Error("GSM-7 data ends with an unfinished escape");
    if (next > 0x7f) throw new Error(`byte 0x${next.toString(16)} at index ${i + 1} is not a GSM-7 septet`);
    out += EXTENSION_CHAR.get(next) ?? (next === ESCAPE ? " " : basicChar(next));
    i++;
  }
  return out;
}

export function encodeUcs2(text: string): Buffer {
  const buf = Buffer.alloc(text.length * 2);
  for (let i = 0; i < text.length; i++) buf.writeUInt16BE(text.charCodeAt(i), i * 2);
  return buf;
}

export function decodeUcs2(buf: Buffer): string {
  if (buf.length % 2 !== 0) throw new Error("UCS-2 data has an odd number of bytes");
  let out = "";
  for (let i = 0; i < buf.length; i += 2) out += String.fromCharCode(buf.readUInt16BE(i));
  return out;
}
