import type { Queryable } from "../db/pool.ts";
import type { Position } from "../search/cursor.ts";
import type { InboundEncoding } from "../smpp/data-coding.ts";
import type { InboundMessageView } from "./inbound-message.ts";

/** What a list of inbound messages narrows to; every field optional. Numbers in international form. */
export interface InboundFilters {
  from?: string | undefined;
  to?: string | undefined;
  /** received_at at or after. */
  since?: Date | undefined;
  /** received_at before. */
  until?: Date | undefined;
}

/** The filters in one fixed text, so a cursor can be bound to them. */
export function inboundScope(owner: string, f: InboundFilters): string {
  return JSON.stringify([
    "inbound",
    owner,
    f.from ?? null,
    f.to ?? null,
    f.since?.toISOString() ?? null,
    f.until?.toISOString() ?? null,
  ]);
}

interface Row {
  id: string;
  from: string;
  to: string;
  body: string;
  operator: string;
  received_at: Date;
  parts: number;
  complete: boolean;
  encoding: InboundEncoding;
  keyword: string | null;
  link: string;
  position_at: string;
}

const COLUMNS = `id, "from", "to", body, operator, received_at, parts, complete, encoding, keyword, link,
  to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position_at`;

const view = (r: Row): InboundMessageView => ({
  id: r.id,
  from: r.from,
  to: r.to,
  message: r.body,
  operator: r.operator,
  received_at: r.received_at.toISOString(),
  parts: r.parts,
  complete: r.complete,
  encoding: r.encoding,
  keyword: r.keyword,
});

/**
 * A page of inbound messages, newest first (received_at, then id), after `after`: an account's,
 * or (owner null) those no account owns, for the operator. Keyset pagination, as GET /api/v1/sms.
 */
export async function searchInbound(
  db: Queryable,
  owner: string | null,
  f: InboundFilters,
  page: { limit: number; after: Position | null },
): Promise<{ messages: (InboundMessageView & { link: string })[]; next: Position | null }> {
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const where = [owner === null ? "account_id IS NULL" : `account_id = ${param(owner)}::uuid`];
  if (f.from !== undefined) where.push(`"from" = ${param(f.from)}`);
  if (f.to !== undefined) where.push(`"to" = ${param(f.to)}`);
  if (f.since !== undefined) where.push(`received_at >= ${param(f.since)}::timestamptz`);
  if (f.until !== undefined) where.push(`received_at < ${param(f.until)}::timestamptz`);
  if (page.after !== null)
    where.push(`(received_at, id) < (${param(page.after.at)}::timestamptz, ${param(page.after.id)}::uuid)`);
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM inbound_messages WHERE ${where.join(" AND ")}
      ORDER BY received_at DESC, id DESC LIMIT ${param(page.limit + 1)}`,
    values,
  );
  const shown = rows.slice(0, page.limit);
  const last = shown.at(-1);
  return {
    messages: shown.map((r) => ({ ...view(r), link: r.link })),
    next: rows.length > page.limit && last ? { at: last.position_at, id: last.id } : null,
  };
}

/** One inbound message of the account, or null (another account's, or none). */
export async function findInbound(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<InboundMessageView | null> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM inbound_messages WHERE id = $1 AND account_id = $2`,
    [id, accountId],
  );
  return rows[0] ? view(rows[0]) : null;
}
