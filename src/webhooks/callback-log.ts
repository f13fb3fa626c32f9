import { type Pool, type Queryable, withTransaction } from "../db/pool.ts";
import { announceWork, OUTBOX_TOPIC } from "../queue/wakeups.ts";
import { takeRedeliveryBudget } from "./redelivery-budget.ts";
import { stopKey, stoppedUrls } from "./refusals.ts";

/*
 * The account's callback log: each event and what became of sending it. The public API calls an
 * entry a "delivery" (GET /api/v1/webhook/deliveries) and sending one again "redeliver": those
 * words are its promise; inside, delivery is the handset's word (docs/decisions/0010).
 */

/** One event of an account and what became of it, as GET /api/v1/webhook/deliveries lists it. */
export interface CallbackLogEntry {
  id: string;
  type: string;
  message_id: string | null;
  url: string;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  completed_at: string | null;
}

interface Row extends Omit<CallbackLogEntry, "created_at" | "completed_at"> {
  created_at: Date;
  completed_at: Date | null;
}

/** A page's row: an event, or, when the page is empty, nulls beside whether the cursor was found. */
type PageRow = { cursor_found: boolean } & (Row | { [K in keyof Row]: null });

const COLUMNS =
  "id, type, message_id, url, state, attempts, last_status, last_error, created_at, completed_at";

const view = (r: Row): CallbackLogEntry => ({
  ...r,
  created_at: r.created_at.toISOString(),
  completed_at: r.completed_at ? r.completed_at.toISOString() : null,
});

/*
 * An account's pending events, read off the outbox's two partial indexes (those waiting for a job,
 * those a job carries): the backlog, small by design, where the account's range holds every event
 * it kept (WEBHOOK_RETENTION_DAYS of them), of which few or none are pending.
 */
const PENDING_EVENTS = `(
  SELECT * FROM webhook_events WHERE enqueued_at IS NULL AND state = 'pending' AND account_id = $1
  UNION ALL
  SELECT * FROM webhook_events WHERE enqueued_at IS NOT NULL AND state = 'pending' AND account_id = $1
) AS webhook_events`;

/**
 * The account's events, newest first, optionally of one state, from `since` on, and older than
 * the event `before` (the last of the previous page: the order is by creation, then id, so events
 * created in one commit are neither skipped nor repeated). Null when `before` is no event of the
 * account (another account's, or one retention deleted).
 */
export async function listCallbackLog(
  db: Queryable,
  accountId: string,
  filter: {
    limit: number;
    state?: CallbackLogEntry["state"] | undefined;
    since?: Date | undefined;
    before?: string | undefined;
  },
): Promise<CallbackLogEntry[] | null> {
  // One statement, so the cursor is read in the page's own snapshot: a cursor that retention
  // deletes meanwhile is found missing, never an empty page. Its created_at stays in SQL, too: a
  // JavaScript Date would cut its microseconds.
  const { rows } = await db.query<PageRow>(
    `WITH page_cursor AS (SELECT created_at, id FROM webhook_events WHERE id = $5 AND account_id = $1)
     SELECT found.cursor_found, page.*
       FROM (SELECT $5::uuid IS NULL OR EXISTS (SELECT FROM page_cursor) AS cursor_found) found
       LEFT JOIN LATERAL (
         SELECT ${COLUMNS} FROM ${filter.state === "pending" ? PENDING_EVENTS : "webhook_events"}
          WHERE found.cursor_found AND account_id = $1 AND ($2::text IS NULL OR state = $2)
            AND ($3::timestamptz IS NULL OR created_at >= $3)
            AND ($5::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM page_cursor))
          ORDER BY created_at DESC, id DESC
          LIMIT $4) page ON true
      ORDER BY page.created_at DESC, page.id DESC`,
    [accountId, filter.state ?? null, filter.since ?? null, filter.limit, filter.before ?? null],
  );
  if (rows[0]?.cursor_found === false) return null;
  return rows
    .filter((row): row is Row & { cursor_found: boolean } => row.id !== null)
    .map(({ cursor_found: _, ...row }) => view(row));
}

/**
 * Events not yet settled, all accounts: those waiting for a job, then those a job carries, each
 * half read off its own partial index (the outbox's backlog, small by design).
 */
export async function countPendingEvents(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT ((SELECT count(*) FROM webhook_events WHERE enqueued_at IS NULL AND state = 'pending')
           + (SELECT count(*) FROM webhook_events WHERE enqueued_at IS NOT NULL AND state = 'pending'))::int AS n`,
  );
  return rows[0]?.n ?? 0;
}

/*
 * Back to the outbox, due now, whatever the state: the next attempt is made at once and counted
 * on top of the earlier ones (so a stale job of an earlier attempt stays a no-op). A pending
 * event that a job already carries is left in that job, which is about to try it (or, if the
 * job was lost, the stranded sweeper requeues it): requeuing it too would send it twice.
 */
const redeliver = (target: string) => `
  UPDATE webhook_events e
     SET state = 'pending', completed_at = NULL, next_attempt_at = now(),
         enqueued_at = CASE WHEN e.state = 'pending' THEN e.enqueued_at END
    FROM (${target} FOR UPDATE) target
   WHERE e.id = target.id
  RETURNING e.id, e.type, e.message_id, e.url, e.state, e.attempts, e.last_status, e.last_error,
            e.created_at, e.completed_at`;

const REDELIVER_IDS = redeliver("SELECT id FROM webhook_events WHERE id = ANY ($1::uuid[])");

/** Puts the events back in the outbox and wakes the relay at commit: an idle one would wait a poll. */
async function redeliverIds(tx: Queryable, ids: string[]): Promise<Row[]> {
  const { rows } = await tx.query<Row>(REDELIVER_IDS, [ids]);
  if (rows.length > 0) await announceWork(tx, [OUTBOX_TOPIC]);
  return rows;
}

/**
 * What a redelivery came to. Redelivery never revives an event a 410 ended (the receiver refused
 * it, or its URL was stopped by a 410: src/webhooks/refusals.ts), nor one bound for a URL still
 * stopped; and it takes from the account's hourly budget (src/webhooks/redelivery-budget.ts).
 */
export type Redelivery<T> =
  | { kind: "redelivered"; data: T }
  | { kind: "notFound" }
  | { kind: "refusedByReceiver" }
  | { kind: "tooMany"; limit: number }
  | { kind: "overBudget"; retryAfterSeconds: number };

/** Redelivers one event of the account. */
export async function redeliverEvent(
  pool: Pool,
  accountId: string,
  eventId: string,
  perHour: number,
): Promise<Redelivery<CallbackLogEntry>> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: string; account_id: string; url: string; ended_by_gone: boolean }>(
      "SELECT id, account_id, url, ended_by_gone FROM webhook_events WHERE id = $1 AND account_id = $2 FOR UPDATE",
      [eventId, accountId],
    );
    const event = rows[0];
    if (!event) return { kind: "notFound" };
    if (event.ended_by_gone || (await stoppedUrls(tx, [event])).size > 0)
      return { kind: "refusedByReceiver" };
    const budget = await takeRedeliveryBudget(tx, accountId, 1, perHour);
    if (!budget.allowed) return { kind: "overBudget", retryAfterSeconds: budget.retryAfterSeconds };
    const [redelivered] = await redeliverIds(tx, [event.id]);
    return { kind: "redelivered", data: view(redelivered as Row) };
  });
}

/** The most events one range redelivery takes: a larger range is refused, to be split. */
export const REDELIVER_RANGE_LIMIT = 10_000;

/**
 * Redelivers every event of the account created in [since, until), but those a 410 ended and those
 * bound for a URL still stopped: the count. A range of more events than REDELIVER_RANGE_LIMIT, or
 * than the whole hourly budget, is refused (`tooMany`); one that does not fit what is left of the
 * budget changes nothing (`overBudget`).
 */
export async function redeliverRange(
  pool: Pool,
  accountId: string,
  range: { since: Date; until: Date },
  perHour: number,
): Promise<Redelivery<{ redelivered: number }>> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: string; account_id: string; url: string }>(
      `SELECT id, account_id, url FROM webhook_events
        WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 AND NOT ended_by_gone
        LIMIT $4`,
      [accountId, range.since, range.until, REDELIVER_RANGE_LIMIT + 1],
    );
    if (rows.length > REDELIVER_RANGE_LIMIT) return { kind: "tooMany", limit: REDELIVER_RANGE_LIMIT };
    const stopped = await stoppedUrls(tx, rows);
    const ids = rows.filter((r) => !stopped.has(stopKey(r.account_id, r.url))).map((r) => r.id);
    if (perHour > 0 && ids.length > perHour) return { kind: "tooMany", limit: perHour };
    if (ids.length === 0) return { kind: "redelivered", data: { redelivered: 0 } };
    const budget = await takeRedeliveryBudget(tx, accountId, ids.length, perHour);
    if (!budget.allowed) return { kind: "overBudget", retryAfterSeconds: budget.retryAfterSeconds };
    const redelivered = await redeliverIds(tx, ids);
    return { kind: "redelivered", data: { redelivered: redelivered.length } };
  });
}
