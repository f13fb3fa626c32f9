import { keyChangesSettled } from "../accounts/key-cache.ts";
import { type Pool, type Queryable, withTransaction } from "../db/pool.ts";
import { EVENT_TYPES, type EventType } from "../events/events.ts";
import { resumeUrl } from "./refusals.ts";
import { newSigningSecret } from "./signing.ts";

/** Events one callback request to an account webhook may carry, at most (migration 014 holds it too). */
export const MAX_WEBHOOK_BATCH_SIZE = 100;

/**
 * The account webhook and the account's signing secret: one row per account. The secret signs
 * every callback of the account, to its webhook or to a send's own webhook_url, and is shown to
 * the client once: by the first PUT /api/v1/webhook, or by a rotation.
 */
export interface AccountWebhook {
  url: string | null;
  /** The event types the webhook receives: all of them unless a PUT named some. */
  events: EventType[];
  /** Events one request carries at most: 1 sends each alone, more sends them as a JSON array. */
  batch_size: number;
  signing_secret_set: boolean;
  secret_created_at: string | null;
  updated_at: string | null;
}

interface Row {
  url: string | null;
  events: EventType[] | null;
  batch_size: number;
  signing_secret: string;
  secret_created_at: Date;
  secret_shown_at: Date | null;
  updated_at: Date;
}

const view = (row: Row | undefined): AccountWebhook => ({
  url: row?.url ?? null,
  events: row?.events ?? [...EVENT_TYPES],
  batch_size: row?.batch_size ?? 1,
  signing_secret_set: row !== undefined,
  secret_created_at: row ? row.secret_created_at.toISOString() : null,
  updated_at: row ? row.updated_at.toISOString() : null,
});

const COLUMNS = "url, events, batch_size, signing_secret, secret_created_at, secret_shown_at, updated_at";

export async function getAccountWebhook(db: Queryable, accountId: string): Promise<AccountWebhook> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM account_webhooks WHERE account_id = $1`, [
    accountId,
  ]);
  return view(rows[0]);
}

/**
 * Registers (or replaces) the account webhook: its URL, the event types it wants (null: all) and
 * the events a request carries (a PUT replaces all three, so one without events goes back to all,
 * one without a batch size to 1). The answer carries the signing secret when it has never been
 * shown: the row lock taken by the upsert makes "never shown" true for one caller. A URL a 410 had
 * stopped for the account is resumed (src/webhooks/refusals.ts).
 */
export async function putAccountWebhook(
  pool: Pool,
  accountId: string,
  webhook: { url: string; events: readonly EventType[] | null; batchSize: number },
): Promise<AccountWebhook & { signing_secret?: string }> {
  const answer = await withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<Row>(
      `INSERT INTO account_webhooks (account_id, url, events, batch_size, signing_secret) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (account_id) DO UPDATE
         SET url = EXCLUDED.url, events = EXCLUDED.events, batch_size = EXCLUDED.batch_size, updated_at = now()
       RETURNING ${COLUMNS}`,
      [accountId, webhook.url, webhook.events, webhook.batchSize, newSigningSecret()],
    );
    const row = rows[0] as Row;
    // Setting a URL is the account's word that it wants callbacks there, even after a 410.
    await resumeUrl(tx, accountId, webhook.url);
    if (row.secret_shown_at !== null) return view(row);
    await tx.query("UPDATE account_webhooks SET secret_shown_at = now() WHERE account_id = $1", [accountId]);
    return { ...view(row), signing_secret: row.signing_secret };
  });
  // The events a send records come with its key (src/intake/auth.ts): in force on the next request.
  await keyChangesSettled();
  return answer;
}

/** Removes the account webhook and its filter; the secret stays, as sends' own webhook_urls still use it. */
export async function deleteAccountWebhook(pool: Pool, accountId: string): Promise<void> {
  await pool.query(
    "UPDATE account_webhooks SET url = NULL, events = NULL, batch_size = 1, updated_at = now() WHERE account_id = $1",
    [accountId],
  );
  await keyChangesSettled();
}

/** Replaced secrets kept signing per account, newest first: more rotations retire the oldest early. */
export const RETIRED_SECRETS_KEPT = 5;

/**
 * Replaces the signing secret (creating the first one if needed) and returns it, once. The
 * replaced secret is kept, with when it was replaced, so callbacks are signed with it too during
 * the grace period, as with every other secret replaced within it (the last RETIRED_SECRETS_KEPT);
 * a secret never shown to the client is not kept, as nobody can verify with it.
 */
export async function rotateSigningSecret(
  pool: Pool,
  accountId: string,
): Promise<{ signing_secret: string; secret_created_at: string }> {
  return withTransaction(pool, async (tx) => {
    // Locked first: two rotations at once each retire the secret the other replaced.
    const { rows: current } = await tx.query<{ signing_secret: string; shown: boolean }>(
      "SELECT signing_secret, secret_shown_at IS NOT NULL AS shown FROM account_webhooks WHERE account_id = $1 FOR UPDATE",
      [accountId],
    );
    if (current[0]?.shown) {
      await tx.query("INSERT INTO webhook_retired_secrets (account_id, secret) VALUES ($1, $2)", [
        accountId,
        current[0].signing_secret,
      ]);
      await tx.query(
        `DELETE FROM webhook_retired_secrets
          WHERE account_id = $1
            AND (replaced_at, secret) NOT IN (SELECT replaced_at, secret FROM webhook_retired_secrets
                                               WHERE account_id = $1 ORDER BY replaced_at DESC LIMIT $2)`,
        [accountId, RETIRED_SECRETS_KEPT],
      );
    }
    // previous_* are kept for processes of the version before (migration 043).
    const { rows } = await tx.query<{ signing_secret: string; secret_created_at: Date }>(
      `INSERT INTO account_webhooks (account_id, signing_secret, secret_shown_at) VALUES ($1, $2, now())
       ON CONFLICT (account_id) DO UPDATE
         SET previous_signing_secret = CASE WHEN account_webhooks.secret_shown_at IS NOT NULL
                                            THEN account_webhooks.signing_secret END,
             previous_secret_replaced_at = CASE WHEN account_webhooks.secret_shown_at IS NOT NULL THEN now() END,
             signing_secret = EXCLUDED.signing_secret, secret_created_at = now(), secret_shown_at = now(),
             updated_at = now()
       RETURNING signing_secret, secret_created_at`,
      [accountId, newSigningSecret()],
    );
    const row = rows[0] as { signing_secret: string; secret_created_at: Date };
    return { signing_secret: row.signing_secret, secret_created_at: row.secret_created_at.toISOString() };
  });
}

/** How one account's callbacks are sent. */
export interface CallbackSettings {
  /** The signing secrets: the current one, then those rotations replaced less than the grace period ago, newest first. */
  secrets: readonly string[];
  /** The account webhook's URL, null without one: only events bound for it go in batches. */
  webhookUrl: string | null;
  /** Events one request to the account webhook carries at most. */
  batchSize: number;
}

/**
 * The callback settings of each account. Creates a signing secret for an account that has none
 * yet (a send with its own webhook_url needs no registration; its owner fetches the secret by a
 * rotation or a first PUT).
 */
export async function callbackSettings(
  db: Queryable,
  accountIds: readonly string[],
  graceMs: number,
): Promise<Map<string, CallbackSettings>> {
  type SettingsRow = {
    account_id: string;
    signing_secret: string;
    previous: string[];
    /** A rotation by a process of the version before writes here alone (migration 043). */
    previous_column: string | null;
    url: string | null;
    batch_size: number;
  };
  const select = async (ids: readonly string[]) =>
    (
      await db.query<SettingsRow>(
        `SELECT account_id, signing_secret, url, batch_size,
                ARRAY(SELECT r.secret FROM webhook_retired_secrets r
                       WHERE r.account_id = w.account_id
                         AND r.replaced_at > now() - make_interval(secs => $2 / 1000.0)
                       ORDER BY r.replaced_at DESC) AS previous,
                CASE WHEN previous_secret_replaced_at > now() - make_interval(secs => $2 / 1000.0)
                     THEN previous_signing_secret END AS previous_column
           FROM account_webhooks w WHERE account_id = ANY ($1::uuid[])`,
        [ids, graceMs],
      )
    ).rows;
  const settingsOf = (r: SettingsRow): CallbackSettings => ({
    secrets: [
      ...new Set([r.signing_secret, ...r.previous, ...(r.previous_column ? [r.previous_column] : [])]),
    ],
    webhookUrl: r.url,
    batchSize: r.batch_size,
  });
  const out = new Map((await select(accountIds)).map((r) => [r.account_id, settingsOf(r)]));
  const missing = [...new Set(accountIds)].filter((id) => !out.has(id));
  if (missing.length === 0) return out;
  // Two workers may race here: DO NOTHING keeps the first secret and both read it back.
  await db.query(
    `INSERT INTO account_webhooks (account_id, signing_secret)
     SELECT * FROM unnest($1::uuid[], $2::text[]) ON CONFLICT (account_id) DO NOTHING`,
    [missing, missing.map(() => newSigningSecret())],
  );
  for (const r of await select(missing)) out.set(r.account_id, settingsOf(r));
  return out;
}
