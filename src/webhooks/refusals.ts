import type { Queryable } from "../db/pool.ts";

/**
 * Callbacks a receiver has refused (docs/decisions/0004-migrations-and-refused-callbacks.md). A
 * callback answered 410 Gone stops the account's callbacks to that URL: every later event of the
 * account bound for it fails without a request, until the account sets the URL again with
 * PUT /api/v1/webhook. A send naming the URL again does not resume it, and redelivery never revives
 * an event a 410 ended (webhook_events.ended_by_gone).
 */

/** The URL as the stop list knows it: as WHATWG URL parsing writes it, without its fragment. */
export function stopListUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = "";
    return parsed.href;
  } catch {
    return url;
  }
}

/** One account's URL, as a key of the map stoppedUrls gives. */
export const stopKey = (accountId: string, url: string): string => `${accountId} ${stopListUrl(url)}`;

/** When each stopped URL among the events' was stopped, by stopKey; URLs not stopped are absent. */
export async function stoppedUrls(
  db: Queryable,
  events: readonly { account_id: string; url: string }[],
): Promise<Map<string, Date>> {
  if (events.length === 0) return new Map();
  const { rows } = await db.query<{ account_id: string; url: string; stopped_at: Date }>(
    `SELECT s.account_id, s.url, s.stopped_at
       FROM webhook_stopped_urls s
       JOIN unnest($1::uuid[], $2::text[]) AS e(account_id, url) ON s.account_id = e.account_id AND s.url = e.url`,
    [events.map((e) => e.account_id), events.map((e) => stopListUrl(e.url))],
  );
  return new Map(rows.map((r) => [stopKey(r.account_id, r.url), r.stopped_at]));
}

/** Puts URLs on their accounts' stop lists (a URL already there keeps its first stop). */
export async function stopUrls(
  db: Queryable,
  stops: readonly { accountId: string; url: string; eventId: string }[],
): Promise<void> {
  if (stops.length === 0) return;
  await db.query(
    `INSERT INTO webhook_stopped_urls (account_id, url, event_id)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[])
     ON CONFLICT (account_id, url) DO NOTHING`,
    [stops.map((s) => s.accountId), stops.map((s) => stopListUrl(s.url)), stops.map((s) => s.eventId)],
  );
}

/** Takes a URL off the account's stop list: the account set it again (PUT /api/v1/webhook). */
export async function resumeUrl(db: Queryable, accountId: string, url: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM webhook_stopped_urls WHERE account_id = $1 AND url = $2", [
    accountId,
    stopListUrl(url),
  ]);
  return (rowCount ?? 0) > 0;
}

/** The last_error of an event failed, without a request, because its URL is stopped. */
export function stoppedError(stoppedAt: Date): string {
  return (
    `not sent: this URL answered 410 Gone at ${stoppedAt.toISOString()}, which stops the account's ` +
    "callbacks to it until the account sets it again with PUT /api/v1/webhook"
  );
}
