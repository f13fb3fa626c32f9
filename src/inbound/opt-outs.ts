import type { Queryable, Tx } from "../db/pool.ts";
import { type AccountEvent, recordAccountEvents } from "../events/events.ts";
import { failOptedOutMessages } from "../lifecycle/index.ts";
import { announceWork, OPT_OUTS_TOPIC } from "../queue/wakeups.ts";
import type { Position } from "../search/cursor.ts";

/**
 * An account's opt-out list: numbers (in international form) that no send of the account
 * reaches. A number goes on it by an opt-out keyword it sent or through the API, and comes off by
 * an opt-in keyword or the API; each change is a contact.opted_out or contact.opted_in event. The
 * send path reads the list inside its own statement (src/sending/record-send.ts).
 */
export type OptOutReason = "keyword" | "api";

export interface OptOutEntry {
  number: string;
  created_at: string;
  reason: OptOutReason;
  keyword: string | null;
  inbound_message_id: string | null;
}

/** A change to a list: the number, when, and why. */
export interface OptOutChange {
  accountId: string;
  number: string;
  change: "opted_out" | "opted_in";
  at: Date;
  reason: OptOutReason;
  keyword: string | null;
  inboundMessageId: string | null;
}

/** The callback events of some changes (contact.opted_out, contact.opted_in). */
export function contactEvents(changes: readonly OptOutChange[]): AccountEvent[] {
  return changes.map((c) => ({
    accountId: c.accountId,
    type: c.change === "opted_out" ? "contact.opted_out" : "contact.opted_in",
    subjectId: c.inboundMessageId,
    data: {
      number: c.number,
      at: c.at.toISOString(),
      reason: c.reason,
      keyword: c.keyword,
      inbound_message_id: c.inboundMessageId,
    },
  }));
}

interface Request {
  accountId: string;
  number: string;
  reason: OptOutReason;
  keyword: string | null;
  inboundMessageId: string | null;
}

/**
 * Puts numbers on their accounts' lists and records the events of those that were not on them
 * yet (a number already listed keeps its first entry: no change, no event); the accounts'
 * messages to a newly listed number that are still waiting fail OPTED_OUT, their holds released.
 * Returns the changes.
 */
export async function addOptOuts(tx: Queryable, requests: readonly Request[]): Promise<OptOutChange[]> {
  if (requests.length === 0) return [];
  const { rows } = await tx.query<{ account_id: string; number: string; created_at: Date }>(
    `INSERT INTO opt_outs (account_id, number, source, keyword, inbound_message_id)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::uuid[])
     ON CONFLICT (account_id, number) DO NOTHING
     RETURNING account_id, number, created_at`,
    [
      requests.map((r) => r.accountId),
      requests.map((r) => r.number),
      requests.map((r) => r.reason),
      requests.map((r) => r.keyword),
      requests.map((r) => r.inboundMessageId),
    ],
  );
  const byKey = new Map(requests.map((r) => [`${r.accountId}|${r.number}`, r]));
  const changes = rows.map((row): OptOutChange => {
    const r = byKey.get(`${row.account_id}|${row.number}`) as Request;
    return { ...r, change: "opted_out", at: row.created_at };
  });
  await recordAccountEvents(tx, contactEvents(changes));
  const byAccount = new Map<string, string[]>();
  for (const c of changes) byAccount.set(c.accountId, [...(byAccount.get(c.accountId) ?? []), c.number]);
  for (const [accountId, numbers] of byAccount) await failOptedOutMessages(tx, accountId, numbers);
  if (changes.length > 0) await announceWork(tx, [OPT_OUTS_TOPIC]);
  return changes;
}

/** Takes numbers off their accounts' lists; events and changes for those that were on them. */
export async function removeOptOuts(tx: Queryable, requests: readonly Request[]): Promise<OptOutChange[]> {
  if (requests.length === 0) return [];
  const { rows } = await tx.query<{ account_id: string; number: string; at: Date }>(
    `DELETE FROM opt_outs o USING unnest($1::uuid[], $2::text[]) AS x(account_id, number)
      WHERE o.account_id = x.account_id AND o.number = x.number
      RETURNING o.account_id, o.number, now() AS at`,
    [requests.map((r) => r.accountId), requests.map((r) => r.number)],
  );
  const byKey = new Map(requests.map((r) => [`${r.accountId}|${r.number}`, r]));
  const changes = rows.map((row): OptOutChange => {
    const r = byKey.get(`${row.account_id}|${row.number}`) as Request;
    return { ...r, change: "opted_in", at: row.at };
  });
  await recordAccountEvents(tx, contactEvents(changes));
  return changes;
}

interface EntryRow {
  number: string;
  created_at: Date;
  source: OptOutReason;
  keyword: string | null;
  inbound_message_id: string | null;
  position_at: string;
}

const view = (r: EntryRow): OptOutEntry => ({
  number: r.number,
  created_at: r.created_at.toISOString(),
  reason: r.source,
  keyword: r.keyword,
  inbound_message_id: r.inbound_message_id,
});

const COLUMNS = `number, created_at, source, keyword, inbound_message_id,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position_at`;

/** Which of these numbers (international form) are on the account's list. */
export async function listedAmong(
  db: Queryable,
  accountId: string,
  numbers: readonly string[],
): Promise<Set<string>> {
  const { rows } = await db.query<{ number: string }>(
    "SELECT number FROM opt_outs WHERE account_id = $1 AND number = ANY ($2::text[])",
    [accountId, [...new Set(numbers)]],
  );
  return new Set(rows.map((r) => r.number));
}

/** One number's entry on the account's list, or null. */
export async function findOptOut(
  db: Queryable,
  accountId: string,
  number: string,
): Promise<OptOutEntry | null> {
  const { rows } = await db.query<EntryRow>(
    `SELECT ${COLUMNS} FROM opt_outs WHERE account_id = $1 AND number = $2`,
    [accountId, number],
  );
  return rows[0] ? view(rows[0]) : null;
}

/**
 * A page of the account's list, newest first (created_at, then number), after `after`; with
 * `number`, that number's entry alone (if listed). The cursor's id is the number.
 */
export async function listOptOuts(
  db: Queryable,
  accountId: string,
  page: { number?: string | undefined; limit: number; after: Position | null },
): Promise<{ entries: OptOutEntry[]; next: Position | null }> {
  const { rows } = await db.query<EntryRow>(
    `SELECT ${COLUMNS} FROM opt_outs
      WHERE account_id = $1 AND ($2::text IS NULL OR number = $2)
        AND ($3::timestamptz IS NULL OR (created_at, number) < ($3::timestamptz, $4::text))
      ORDER BY created_at DESC, number DESC
      LIMIT $5`,
    [accountId, page.number ?? null, page.after?.at ?? null, page.after?.id ?? null, page.limit + 1],
  );
  const entries = rows.slice(0, page.limit);
  const last = entries.at(-1);
  return {
    entries: entries.map(view),
    next: rows.length > page.limit && last ? { at: last.position_at, id: last.number } : null,
  };
}

/** POST /api/v1/opt-outs: the entry, and whether this call put it there. */
export async function optOutByApi(
  tx: Tx,
  accountId: string,
  number: string,
): Promise<{ created: boolean; entry: OptOutEntry }> {
  const changes = await addOptOuts(tx, [
    { accountId, number, reason: "api", keyword: null, inboundMessageId: null },
  ]);
  const entry = await findOptOut(tx, accountId, number);
  if (!entry) throw new Error("an opt-out just written is not there");
  return { created: changes.length > 0, entry };
}

/** DELETE /api/v1/opt-outs/{number}: whether the number was listed. */
export async function optInByApi(tx: Tx, accountId: string, number: string): Promise<boolean> {
  const changes = await removeOptOuts(tx, [
    { accountId, number, reason: "api", keyword: null, inboundMessageId: null },
  ]);
  return changes.length > 0;
}
