/**
 * One migration file as the runner applies it (docs/decisions/0004-migrations-and-refused-callbacks.md).
 *
 * By default a file runs whole in one transaction. A file whose first line is the marker below runs
 * outside any transaction, one statement at a time, each committed on its own: how CREATE INDEX
 * CONCURRENTLY (which cannot run in a transaction) builds an index on a large table without holding
 * off its writes. Such a file may stop half-way (a crash, a lock not granted) and is then run again
 * from its first statement, so every statement in it must be harmless to repeat: IF NOT EXISTS, IF
 * EXISTS, ON CONFLICT DO NOTHING, or a guard of its own.
 */
export const NO_TRANSACTION_MARKER = "-- shiri:no-transaction";

export interface MigrationFile {
  name: string;
  /** Run whole in one transaction (the default), or statement by statement (the marker). */
  transactional: boolean;
  /** The whole text (a transactional file is sent as it is). */
  sql: string;
  /** The statements, in order, without their trailing semicolons (comments kept). */
  statements: string[];
}

export function parseMigration(name: string, sql: string): MigrationFile {
  const firstLine = sql.split("\n", 1)[0]?.trim() ?? "";
  return {
    name,
    transactional: !firstLine.startsWith(NO_TRANSACTION_MARKER),
    sql,
    statements: splitStatements(sql),
  };
}

/**
 * The SQL statements of a text, split at the semicolons that end them: not those inside quotes,
 * quoted identifiers, dollar quotes ($$ … $$, $tag$ … $tag$) or comments. Statements made only of
 * comments and blanks are dropped.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  let hasCode = false;
  const push = (end: number) => {
    const text = sql.slice(start, end).trim();
    if (hasCode && text) statements.push(text);
    hasCode = false;
  };
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    if (c === "-" && next === "-") {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === "/" && next === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (c === "'" || c === '"') {
      i = closingQuote(sql, i, c);
      hasCode = true;
    } else if (c === "$") {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i))?.[0];
      if (tag) {
        const end = sql.indexOf(tag, i + tag.length);
        i = end === -1 ? sql.length : end + tag.length;
      } else i++;
      hasCode = true;
    } else if (c === ";") {
      push(i);
      start = i + 1;
      i++;
    } else {
      if (c !== undefined && !/\s/.test(c)) hasCode = true;
      i++;
    }
  }
  push(sql.length);
  return statements;
}

/** Just past the quote that closes the one at `open` (a doubled quote is an escaped one). */
function closingQuote(sql: string, open: number, quote: string): number {
  let i = open + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

const CONCURRENT_INDEX =
  /^(?:--[^\n]*\n|\s)*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+("?)(\w+)\1/i;

/**
 * The index a statement builds concurrently (CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS
 * <name>), or null. A concurrent build that stopped (cancelled, timed out, the process gone)
 * leaves an invalid index of that name behind, which IF NOT EXISTS would then take for done: the
 * runner drops it first.
 */
export function concurrentIndexName(statement: string): string | null {
  return CONCURRENT_INDEX.exec(statement)?.[2] ?? null;
}

/**
 * Statements that take only locks which never hold off reads and writes of the table (its
 * concurrent index builds and drops): they may wait as long as they need. Every other statement
 * waits at most the migration lock timeout, as its wait holds off everything queued behind it.
 */
export function takesOnlyWeakLocks(statement: string): boolean {
  const code = statement.replace(/--[^\n]*\n/g, "").trim();
  return /^(?:CREATE\s+(?:UNIQUE\s+)?INDEX|DROP\s+INDEX|REINDEX\s+\w+)\s+CONCURRENTLY\b/i.test(code);
}
