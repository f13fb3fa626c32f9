import type { Operator } from "../../carriers/index.ts";
import type { Queryable } from "../db/pool.ts";
import type { Position } from "./cursor.ts";
import { MESSAGE_COLUMNS, type MessageRow } from "./message-row.ts";

export const MESSAGE_STATUSES = ["created", "enqueued", "processing", "success", "failed"] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** What a search narrows the account's messages to; every field optional. */
export interface MessageFilters {
  status?: MessageStatus | undefined;
  operator?: Operator | undefined;
  /** A phone number; matches the messages sent to it with or without the leading +. */
  to?: string | undefined;
  bulkId?: string | undefined;
  /** created_at at or after. */
  since?: Date | undefined;
  /** created_at before. */
  until?: Date | undefined;
}

/** The filters in one fixed text, so a cursor can be bound to them. */
export function filtersScope(accountId: string, f: MessageFilters): string {
  return JSON.stringify([
    accountId,
    f.status ?? null,
    f.operator ?? null,
    f.to === undefined ? null : recipientForms(f.to),
    f.bulkId?.toLowerCase() ?? null,
    f.since?.toISOString() ?? null,
    f.until?.toISOString() ?? null,
  ]);
}

/** `to` is stored as sent: "+263…" and "263…" are the same number. */
function recipientForms(to: string): string[] {
  const digits = to.trim().replace(/^\+/, "");
  return [digits, `+${digits}`];
}

export interface FoundMessage extends MessageRow {
  bulk_id: string | null;
  /** Where its charge stands: held, captured (taken), or released (given back). */
  billing: "held" | "captured" | "released";
  /** created_at to the microsecond, UTC, as a cursor holds it. */
  position_at: string;
}

export interface SearchPage {
  messages: FoundMessage[];
  /** Where the next page starts; null when there is none. */
  next: Position | null;
}

/**
 * Status and operator have no index (their updates stay HOT): they are filtered on the rows a
 * page reads, and a page reads at most this many of the account's messages in order. A page can
 * then hold fewer than `limit` messages, or none, and still have a next one; its time stays
 * bounded however rare the status asked for.
 */
export const SCAN_WINDOW = 5_000;

const POSITION_AT = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The WHERE clause the indexes serve (account, recipient, bulk, time, keyset) and its values. */
function indexedConditions(accountId: string, f: MessageFilters, after: Position | null) {
  const values: unknown[] = [accountId];
  const where = ["account_id = $1"];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  if (f.to !== undefined) where.push(`"to" = ANY(${param(recipientForms(f.to))}::text[])`);
  if (f.bulkId !== undefined) where.push(`bulk_id = ${param(f.bulkId)}::uuid`);
  if (f.since !== undefined) where.push(`created_at >= ${param(f.since)}::timestamptz`);
  if (f.until !== undefined) where.push(`created_at < ${param(f.until)}::timestamptz`);
  if (after !== null)
    where.push(`(created_at, id) < (${param(after.at)}::timestamptz, ${param(after.id)}::uuid)`);
  return { values, where, param };
}

/**
 * One page of the account's messages matching the filters, newest first (created_at, then id),
 * starting after `after`. Keyset pagination: a message inserted while a client pages never
 * shifts a page, and no message is returned twice.
 */
export async function searchMessages(
  db: Queryable,
  accountId: string,
  filters: MessageFilters,
  page: { limit: number; after: Position | null },
): Promise<SearchPage> {
  const { values, where, param } = indexedConditions(accountId, filters, page.after);
  const onRows: string[] = [];
  if (filters.status !== undefined) onRows.push(`status = ${param(filters.status)}`);
  if (filters.operator !== undefined) onRows.push(`operator = ${param(filters.operator)}`);
  const scan = onRows.length > 0 ? SCAN_WINDOW : page.limit + 1;
  const scanParam = param(scan);
  const matches = onRows.length > 0 ? onRows.join(" AND ") : "true";
  // Executed lazily, row by row in index order: reading stops once limit + 1 rows match, or at
  // the window's last row, which comes back whatever it holds (it is where the next page starts).
  const { rows } = await db.query<FoundMessage & { matches: boolean; n: number }>(
    `SELECT w.*, ${POSITION_AT} AS position_at, ${matches} AS matches
       FROM (SELECT ${MESSAGE_COLUMNS}, bulk_id, billing, row_number() OVER (ORDER BY created_at DESC, id DESC) AS n
               FROM messages
              WHERE ${where.join(" AND ")}
              ORDER BY created_at DESC, id DESC
              LIMIT ${scanParam}) w
      WHERE (${matches}) OR w.n = ${scanParam}
      ORDER BY w.created_at DESC, w.id DESC
      LIMIT ${param(page.limit + 1)}`,
    values,
  );
  const matching = rows.filter((r) => r.matches);
  if (matching.length > page.limit) {
    const messages = matching.slice(0, page.limit);
    const last = messages[messages.length - 1] as FoundMessage;
    return { messages: messages.map(strip), next: { at: last.position_at, id: last.id } };
  }
  // The window's last row was reached before the page filled: more may match past it.
  const edge = rows.find((r) => Number(r.n) === scan);
  return {
    messages: matching.map(strip),
    next: edge ? { at: edge.position_at, id: edge.id } : null,
  };
}

function strip(row: FoundMessage & { matches?: boolean; n?: number }): FoundMessage {
  const { matches: _m, n: _n, ...message } = row;
  return message;
}

/**
 * How many of the account's messages the indexed filters cover, counted up to `atMost + 1` (so
 * the count costs at most that many index entries): what an export would have to read.
 */
export async function countCovered(
  db: Queryable,
  accountId: string,
  filters: MessageFilters,
  atMost: number,
): Promise<number> {
  const { values, where, param } = indexedConditions(accountId, filters, null);
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM messages WHERE ${where.join(" AND ")} LIMIT ${param(atMost + 1)}) s`,
    values,
  );
  return rows[0]?.n ?? 0;
}
