import type { Queryable } from "../db/pool.ts";
import { countSegments } from "../domain/segments.ts";

/**
 * Keywords: an inbound message whose whole text is one of an account's opt-out words adds its
 * sender to the account's opt-out list, an opt-in word takes it off, a help word asks for the
 * account's help text (how loosely a text is read for each kind: keywordOf). Each kind may have a
 * reply, sent from the number written to and billed as a send; none is sent when the account has
 * configured none.
 */
export const KEYWORD_KINDS = ["opt_out", "opt_in", "help"] as const;
export type KeywordKind = (typeof KEYWORD_KINDS)[number];

export const DEFAULT_KEYWORDS: Readonly<Record<KeywordKind, readonly string[]>> = {
  opt_out: ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"],
  opt_in: ["START", "UNSTOP", "YES"],
  help: ["HELP", "INFO"],
};

export interface KeywordSettings {
  lists: Readonly<Record<KeywordKind, readonly string[]>>;
  /** The reply each kind sends; null sends none. */
  replies: Readonly<Record<KeywordKind, string | null>>;
}

export const DEFAULT_KEYWORD_SETTINGS: KeywordSettings = {
  lists: DEFAULT_KEYWORDS,
  replies: { opt_out: null, opt_in: null, help: null },
};

/** A keyword as lists hold it. */
export const normaliseKeyword = (text: string): string => text.trim().toUpperCase();

/** A keyword is one word of letters and digits (so a list can be given as "STOP,QUIT"). */
export const KEYWORD_PATTERN = /^[A-Z0-9]{1,20}$/;

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
/** White space and invisible characters (controls and format marks). */
const BLANK = /[\s\p{Cc}\p{Cf}]/u;

/**
 * The text without what `strip` matches at either end, a whole character (code point) at a time,
 * so a letter outside the Basic Multilingual Plane is one letter, not two halves; one pass,
 * whatever the text's length.
 */
function trimmed(text: string, strip: (char: string) => boolean): string {
  const chars = Array.from(text);
  let start = 0;
  let end = chars.length;
  while (start < end && strip(chars[start] as string)) start++;
  while (end > start && strip(chars[end - 1] as string)) end--;
  return chars.slice(start, end).join("");
}

/**
 * The keyword a whole text is, and its kind; null for any other text. Full-width and other
 * compatibility forms are read as their plain letters (NFKC), case ignored. An opt-out or help
 * word may have anything but letters and digits around it (spaces, punctuation, emoji, a NUL
 * that GSM 03.38 reads as "@"): when in doubt, a STOP is honoured (decision 0038). An opt-in word
 * only white space and invisible characters: "Yes." or "Start?" said to something else must not
 * put a number back on the send lists. Nothing inside the text is removed.
 */
export function keywordOf(
  text: string,
  lists: KeywordSettings["lists"],
): { keyword: string; kind: KeywordKind } | null {
  const plain = text.normalize("NFKC");
  const loose = trimmed(plain, (char) => !LETTER_OR_DIGIT.test(char)).toUpperCase();
  if (KEYWORD_PATTERN.test(loose))
    for (const kind of ["opt_out", "help"] as const)
      if (lists[kind].includes(loose)) return { keyword: loose, kind };
  const strict = trimmed(plain, (char) => BLANK.test(char)).toUpperCase();
  if (KEYWORD_PATTERN.test(strict) && lists.opt_in.includes(strict))
    return { keyword: strict, kind: "opt_in" };
  return null;
}

export interface KeywordRow {
  opt_out: string[] | null;
  opt_in: string[] | null;
  help: string[] | null;
  opt_out_reply: string | null;
  opt_in_reply: string | null;
  help_reply: string | null;
}

/** An account's settings from its inbound_keywords row (the defaults without one). */
export function settingsOf(row: KeywordRow | undefined | null): KeywordSettings {
  if (!row || row.opt_out === null || row.opt_in === null || row.help === null)
    return DEFAULT_KEYWORD_SETTINGS;
  return {
    lists: { opt_out: row.opt_out, opt_in: row.opt_in, help: row.help },
    replies: { opt_out: row.opt_out_reply, opt_in: row.opt_in_reply, help: row.help_reply },
  };
}

export async function keywordSettings(db: Queryable, accountId: string): Promise<KeywordSettings> {
  const { rows } = await db.query<KeywordRow>(
    "SELECT opt_out, opt_in, help, opt_out_reply, opt_in_reply, help_reply FROM inbound_keywords WHERE account_id = $1",
    [accountId],
  );
  return settingsOf(rows[0]);
}

/** A word in two lists would make its meaning depend on the order they are read in. */
export class OverlappingKeywordsError extends Error {}

/** A reply no send could carry: more segments, in its encoding, than MAX_SEGMENTS allows. */
export class ReplyTooLongError extends Error {}

const KIND_NAME: Readonly<Record<KeywordKind, string>> = {
  opt_out: "opt-out",
  opt_in: "opt-in",
  help: "help",
};

/** Why a reply cannot be sent as a send of at most `maxSegments` segments, or null when it can. */
export function replyTooLong(kind: KeywordKind, reply: string, maxSegments: number): string | null {
  const { segments, encoding } = countSegments(reply);
  return segments > maxSegments
    ? `the ${KIND_NAME[kind]} reply needs ${segments} segments (${encoding}); at most ${maxSegments} (MAX_SEGMENTS)`
    : null;
}

/**
 * Replaces what `change` names of the account's settings, keeping the rest; returns the result.
 * Lists are normalised (upper case, no repeats); a reply given as null or "" removes it. A reply
 * over `maxSegments` (the send path's MAX_SEGMENTS) is refused (ReplyTooLongError): it would go
 * out as a send no client could make.
 */
export async function setKeywordSettings(
  db: Queryable,
  accountId: string,
  change: {
    lists?: Partial<Record<KeywordKind, readonly string[]>>;
    replies?: Partial<Record<KeywordKind, string | null>>;
  },
  options: { maxSegments: number },
): Promise<KeywordSettings> {
  const now = await keywordSettings(db, accountId);
  const lists = { ...now.lists };
  for (const kind of KEYWORD_KINDS) {
    const given = change.lists?.[kind];
    if (given) lists[kind] = [...new Set(given.map(normaliseKeyword))];
  }
  const replies = { ...now.replies };
  for (const kind of KEYWORD_KINDS) {
    const given = change.replies?.[kind];
    if (given !== undefined) replies[kind] = given === null || given.trim() === "" ? null : given;
    const tooLong = given ? replyTooLong(kind, given, options.maxSegments) : null;
    if (tooLong) throw new ReplyTooLongError(tooLong);
  }
  const seen = new Map<string, KeywordKind>();
  for (const kind of KEYWORD_KINDS)
    for (const word of lists[kind]) {
      const other = seen.get(word);
      if (other && other !== kind) throw new OverlappingKeywordsError(`${word} is both ${other} and ${kind}`);
      seen.set(word, kind);
    }
  await db.query(
    `INSERT INTO inbound_keywords (account_id, opt_out, opt_in, help, opt_out_reply, opt_in_reply, help_reply)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (account_id) DO UPDATE
       SET opt_out = EXCLUDED.opt_out, opt_in = EXCLUDED.opt_in, help = EXCLUDED.help,
           opt_out_reply = EXCLUDED.opt_out_reply, opt_in_reply = EXCLUDED.opt_in_reply,
           help_reply = EXCLUDED.help_reply, updated_at = now()`,
    [accountId, lists.opt_out, lists.opt_in, lists.help, replies.opt_out, replies.opt_in, replies.help],
  );
  return { lists, replies };
}
