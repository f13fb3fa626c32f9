/**
 * Smart encoding: characters that look like GSM-7 ones but are not in the GSM 03.38 alphabet
 * (typographic quotes, dashes, spaces, the ellipsis…), most often pasted from a word processor.
 * One of them turns a whole text into UCS-2: 70 characters a segment instead of 160. Replacing
 * them by their GSM-7 look-alikes keeps the text GSM-7.
 *
 * Only punctuation and spacing is replaced, never a letter: an accent can change a word, a quote
 * cannot. The table is documented in docs/smart-encoding.md (a unit test keeps the two in step).
 */
import { chooseEncoding, countSegments } from "./segments.ts";

export interface LookAlike {
  /** The character as written (one UTF-16 code unit). */
  char: string;
  /** What is sent instead: GSM-7 text, or "" to drop an invisible character. */
  replacement: string;
  /** Its Unicode name, for the documentation. */
  name: string;
}

const entry = (char: string, replacement: string, name: string): LookAlike => ({ char, replacement, name });

/** Every replacement smart encoding makes, grouped as the documentation lists them. */
export const LOOK_ALIKES: readonly LookAlike[] = [
  // Quotes and primes.
  entry("\u2018", "'", "LEFT SINGLE QUOTATION MARK"),
  entry("\u2019", "'", "RIGHT SINGLE QUOTATION MARK"),
  entry("\u201A", "'", "SINGLE LOW-9 QUOTATION MARK"),
  entry("\u201B", "'", "SINGLE HIGH-REVERSED-9 QUOTATION MARK"),
  entry("\u2032", "'", "PRIME"),
  entry("\u2035", "'", "REVERSED PRIME"),
  entry("\u02B9", "'", "MODIFIER LETTER PRIME"),
  entry("\u02BC", "'", "MODIFIER LETTER APOSTROPHE"),
  entry("\u02C8", "'", "MODIFIER LETTER VERTICAL LINE"),
  entry("\u00B4", "'", "ACUTE ACCENT"),
  entry("\u0060", "'", "GRAVE ACCENT"),
  entry("\u2039", "'", "SINGLE LEFT-POINTING ANGLE QUOTATION MARK"),
  entry("\u203A", "'", "SINGLE RIGHT-POINTING ANGLE QUOTATION MARK"),
  entry("\uFF07", "'", "FULLWIDTH APOSTROPHE"),
  entry("\u201C", '"', "LEFT DOUBLE QUOTATION MARK"),
  entry("\u201D", '"', "RIGHT DOUBLE QUOTATION MARK"),
  entry("\u201E", '"', "DOUBLE LOW-9 QUOTATION MARK"),
  entry("\u201F", '"', "DOUBLE HIGH-REVERSED-9 QUOTATION MARK"),
  entry("\u2033", '"', "DOUBLE PRIME"),
  entry("\u2036", '"', "REVERSED DOUBLE PRIME"),
  entry("\u02BA", '"', "MODIFIER LETTER DOUBLE PRIME"),
  entry("\u00AB", '"', "LEFT-POINTING DOUBLE ANGLE QUOTATION MARK"),
  entry("\u00BB", '"', "RIGHT-POINTING DOUBLE ANGLE QUOTATION MARK"),
  entry("\uFF02", '"', "FULLWIDTH QUOTATION MARK"),
  // Dashes, hyphens and minus signs.
  entry("\u2010", "-", "HYPHEN"),
  entry("\u2011", "-", "NON-BREAKING HYPHEN"),
  entry("\u2012", "-", "FIGURE DASH"),
  entry("\u2013", "-", "EN DASH"),
  entry("\u2014", "-", "EM DASH"),
  entry("\u2015", "-", "HORIZONTAL BAR"),
  entry("\u2043", "-", "HYPHEN BULLET"),
  entry("\u2212", "-", "MINUS SIGN"),
  entry("\uFE58", "-", "SMALL EM DASH"),
  entry("\uFE63", "-", "SMALL HYPHEN-MINUS"),
  entry("\uFF0D", "-", "FULLWIDTH HYPHEN-MINUS"),
  // Spaces.
  entry("\u00A0", " ", "NO-BREAK SPACE"),
  entry("\u2000", " ", "EN QUAD"),
  entry("\u2001", " ", "EM QUAD"),
  entry("\u2002", " ", "EN SPACE"),
  entry("\u2003", " ", "EM SPACE"),
  entry("\u2004", " ", "THREE-PER-EM SPACE"),
  entry("\u2005", " ", "FOUR-PER-EM SPACE"),
  entry("\u2006", " ", "SIX-PER-EM SPACE"),
  entry("\u2007", " ", "FIGURE SPACE"),
  entry("\u2008", " ", "PUNCTUATION SPACE"),
  entry("\u2009", " ", "THIN SPACE"),
  entry("\u200A", " ", "HAIR SPACE"),
  entry("\u202F", " ", "NARROW NO-BREAK SPACE"),
  entry("\u205F", " ", "MEDIUM MATHEMATICAL SPACE"),
  entry("\u3000", " ", "IDEOGRAPHIC SPACE"),
  // Invisible characters: nothing is sent for them.
  entry("\u00AD", "", "SOFT HYPHEN"),
  entry("\u200B", "", "ZERO WIDTH SPACE"),
  entry("\u200C", "", "ZERO WIDTH NON-JOINER"),
  entry("\u200D", "", "ZERO WIDTH JOINER"),
  entry("\u2060", "", "WORD JOINER"),
  entry("\uFEFF", "", "ZERO WIDTH NO-BREAK SPACE (byte order mark)"),
  // Other punctuation.
  entry("\u2026", "...", "HORIZONTAL ELLIPSIS"),
  entry("\u2022", "-", "BULLET"),
  entry("\u2024", ".", "ONE DOT LEADER"),
  entry("\u2025", "..", "TWO DOT LEADER"),
  entry("\u02C6", "^", "MODIFIER LETTER CIRCUMFLEX ACCENT"),
  entry("\u02DC", "~", "SMALL TILDE"),
  entry("\u2044", "/", "FRACTION SLASH"),
  entry("\u2215", "/", "DIVISION SLASH"),
  entry("\uFF0C", ",", "FULLWIDTH COMMA"),
  entry("\uFF1A", ":", "FULLWIDTH COLON"),
  entry("\uFF1B", ";", "FULLWIDTH SEMICOLON"),
  entry("\uFF01", "!", "FULLWIDTH EXCLAMATION MARK"),
  entry("\uFF1F", "?", "FULLWIDTH QUESTION MARK"),
  entry("\uFF08", "(", "FULLWIDTH LEFT PARENTHESIS"),
  entry("\uFF09", ")", "FULLWIDTH RIGHT PARENTHESIS"),
];

const REPLACEMENT = new Map(LOOK_ALIKES.map((e) => [e.char, e.replacement]));

/** Every character the table knows, in one class: a text without any is left as it is at once. */
const ANY_LOOK_ALIKE = new RegExp(`[${[...REPLACEMENT.keys()].map(escapeForClass).join("")}]`, "g");

function escapeForClass(ch: string): string {
  return /[\\\]^-]/.test(ch) ? `\\${ch}` : ch;
}

export interface SmartEncoded {
  /** The text as it is sent. */
  text: string;
  /** Characters replaced (or dropped). */
  replaced: number;
}

/**
 * The text with its look-alikes replaced, when that makes the whole text GSM-7 in no more
 * segments; null when the text is GSM-7 already, has no look-alike, keeps some other character
 * GSM-7 lacks (an emoji, a letter of another script: then replacing would change the text and not
 * its price), or would need more segments replaced.
 */
export function smartEncode(text: string): SmartEncoded | null {
  if (chooseEncoding(text) === "gsm7") return null;
  let replaced = 0;
  const out = text.replace(ANY_LOOK_ALIKE, (ch) => {
    replaced++;
    return REPLACEMENT.get(ch) ?? ch;
  });
  // A text of invisible characters alone would be sent empty: it is left as written.
  if (replaced === 0 || out.trim() === "" || chooseEncoding(out) !== "gsm7") return null;
  // An ellipsis becomes three characters: a text of many could need more GSM-7 segments than it
  // needs UCS-2 ones, and cost more, or no longer fit MAX_SEGMENTS.
  if (countSegments(out).segments > countSegments(text).segments) return null;
  return { text: out, replaced };
}
