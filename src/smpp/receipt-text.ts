/**
 * Parses the delivery receipt text of SMPP 3.4 Appendix B:
 *   id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E text:...
 * The appendix is informative, so carriers vary: field order, key case, "submit_date", missing
 * fields, long state names. Parsing is lenient; the caller decides what it cannot do without.
 */

export interface ReceiptText {
  /** The SMSC message id as written in the receipt (format per carrier: hex or decimal). */
  id: string | null;
  /** Final state, upper-cased and normalised to the 7-letter form (DELIVRD, UNDELIV, …). */
  stat: string | null;
  err: string | null;
  /** YYMMDDhhmm[ss] exactly as sent: the time zone is the carrier's, so it is not guessed here. */
  submitDate: string | null;
  doneDate: string | null;
  sub: string | null;
  dlvrd: string | null;
  text: string | null;
}

type Key = "id" | "sub" | "dlvrd" | "submitDate" | "doneDate" | "stat" | "err" | "text";

/** Receipt keys as carriers write them (lower-cased, separators collapsed) → field. */
const KEYS: Readonly<Record<string, Key>> = {
  id: "id",
  sub: "sub",
  dlvrd: "dlvrd",
  "submit date": "submitDate",
  "done date": "doneDate",
  stat: "stat",
  err: "err",
  text: "text",
};

/** Long or variant state names some SMSCs write → the Appendix B form. */
const STAT_ALIASES: Readonly<Record<string, string>> = {
  DELIVERED: "DELIVRD",
  UNDELIVERABLE: "UNDELIV",
  UNDELIVERED: "UNDELIV",
  REJECTED: "REJECTD",
  ACCEPTED: "ACCEPTD",
  DELETED: "DELETED",
  EXPIRED: "EXPIRED",
  ENROUTE: "ENROUTE",
};

const KEY_PATTERN = /\b(id|sub|dlvrd|submit[ _]?date|done[ _]?date|stat|err|text)\s*:/gi;

function canonicalKey(raw: string): Key | undefined {
  return KEYS[raw.toLowerCase().replace(/[ _]?date$/, " date")];
}

/** Null when the text has neither an id nor a stat: then it is not a receipt. */
export function parseReceiptText(text: string): ReceiptText | null {
  const found: { key: Key; start: number; end: number }[] = [];
  for (const match of text.matchAll(KEY_PATTERN)) {
    const key = canonicalKey(match[1] ?? "");
    if (key) found.push({ key, start: match.index, end: match.index + match[0].length });
  }
  const out: ReceiptText = {
    id: null,
    stat: null,
    err: null,
    submitDate: null,
    doneDate: null,
    sub: null,
    dlvrd: null,
    text: null,
  };
  const seen = new Set<Key>();
  for (const [i, field] of found.entries()) {
    // The first occurrence wins, so an "id:" inside the message text cannot override the real one.
    if (seen.has(field.key)) continue;
    seen.add(field.key);
    let next = i + 1;
    // The text runs on past keys already seen: "text:see id:5" is text, not a second id.
    if (field.key === "text") while (next < found.length && seen.has(found[next]?.key ?? "text")) next++;
    const value = text.slice(field.end, found[next]?.start ?? text.length).trim();
    if (field.key === "text") {
      out.text = value;
      continue;
    }
    const token = value.split(/\s+/)[0] ?? "";
    if (token !== "") out[field.key] = token;
  }
  if (out.stat !== null) {
    const upper = out.stat.toUpperCase();
    out.stat = STAT_ALIASES[upper] ?? upper;
  }
  return out.id === null && out.stat === null ? null : out;
}
