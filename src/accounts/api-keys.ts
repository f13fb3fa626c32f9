import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Queryable } from "../db/pool.ts";
import { MESSAGE_EVENT_TYPES, type MessageEventType } from "../webhooks/events.ts";
import { type SendDefaults, sendDefaultsOf } from "./send-defaults.ts";

/** Key secrets look like `shr_` + 43 base64url characters (32 random bytes). */
const TOKEN_PREFIX = "shr_";
const TOKEN_PATTERN = /^shr_[A-Za-z0-9_-]{43}$/;

export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");
export const isWellFormedToken = (token: string): boolean => TOKEN_PATTERN.test(token);

export interface CreatedApiKey {
  id: string;
  name: string;
  token: string;
  account_id: string;
  created_at: Date;
}

export async function createApiKey(db: Queryable, accountId: string, name: string): Promise<CreatedApiKey> {
  const token = TOKEN_PREFIX + randomBytes(32).toString("base64url");
  const id = randomUUID();
  const { rows } = await db.query<{ created_at: Date }>(
    `INSERT INTO api_keys (id, account_id, name, token_hash) VALUES ($1, $2, $3, $4) RETURNING created_at`,
    [id, accountId, name, hashToken(token)],
  );
  return { id, name, token, account_id: accountId, created_at: (rows[0] as { created_at: Date }).created_at };
}

/** The stored record, serialised as the contract's key list shows it (PascalCase, as is). */
export interface ApiKeyRecord {
  ID: string;
  CreatedAt: Date;
  UpdatedAt: Date | null;
  DeletedAt: Date | null;
  Name: string;
  TokenHash: string;
  AccountId: string;
  Active: boolean;
  LastUsedAt: Date | null;
}

export async function listApiKeys(db: Queryable, accountId: string): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<ApiKeyRecord>(
    `SELECT id AS "ID", created_at AS "CreatedAt", updated_at AS "UpdatedAt", deleted_at AS "DeletedAt",
            name AS "Name", token_hash AS "TokenHash", account_id AS "AccountId", active AS "Active",
            last_used_at AS "LastUsedAt"
       FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
    [accountId],
  );
  return rows;
}

/** A key as an operator sees it: never its secret or the secret's hash. */
export interface ApiKeySummary {
  api_key_id: string;
  name: string;
  active: boolean;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export async function apiKeySummaries(db: Queryable, accountId: string): Promise<ApiKeySummary[]> {
  const { rows } = await db.query<ApiKeySummary>(
    `SELECT id AS api_key_id, name, active, created_at, last_used_at, deleted_at AS revoked_at
       FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
    [accountId],
  );
  return rows;
}

/** Revokes a key of the account. Returns false when the account has no key with that id. */
export async function revokeApiKey(db: Queryable, accountId: string, keyId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE api_keys
        SET active = false,
            updated_at = CASE WHEN active THEN now() ELSE updated_at END,
            deleted_at = COALESCE(deleted_at, now())
      WHERE id = $1 AND account_id = $2`,
    [keyId, accountId],
  );
  return rowCount === 1;
}

export interface Principal {
  keyId: string;
  accountId: string;
  currency: string;
  /**
   * The event types the account webhook wants (all unless it named some; none when the account
   * has no webhook): a send without its own webhook_url records only these.
   */
  webhookEvents: readonly MessageEventType[];
  /** The account's defaults for its sends (smart encoding, a delivery window). */
  sendDefaults: SendDefaults;
}

/**
 * Looks keys up by hash on every request, so a revocation made by any process takes effect on
 * the very next one: many tokens in one statement (the API batches the requests in flight, see
 * src/intake/auth.ts), each answered by its principal or null. LastUsedAt is refreshed when it is
 * older than `precisionSeconds`, which keeps a busy key from turning every request into a write
 * on one hot row.
 */
export async function authenticateMany(
  db: Queryable,
  tokens: readonly string[],
  precisionSeconds: number,
): Promise<(Principal | null)[]> {
  const hashes = tokens.map((token) => (isWellFormedToken(token) ? hashToken(token) : null));
  const wanted = [...new Set(hashes.filter((hash) => hash !== null))];
  if (wanted.length === 0) return tokens.map(() => null);
  const { rows } = await db.query<{
    id: string;
    token_hash: string;
    account_id: string;
    currency: string;
    stale: boolean;
    has_webhook: boolean;
    webhook_events: MessageEventType[] | null;
    smart_encoding: boolean | null;
    deliver_start: string | null;
    deliver_end: string | null;
    deliver_time_zone: string | null;
  }>({
    // Named, and a function with one generic plan (migration 015): every request runs it. The
    // account's send defaults come with the key (migration 030), so a send reads them for nothing.
    name: "shiri_authenticate_many",
    text: `SELECT k.*, d.smart_encoding, d.deliver_start, d.deliver_end, d.deliver_time_zone
             FROM api_keys_by_hash($1::text[], $2) k
             LEFT JOIN account_send_defaults d ON d.account_id = k.account_id`,
    values: [wanted, precisionSeconds],
  });
  const stale = rows.filter((key) => key.stale).map((key) => key.id);
  if (stale.length > 0) {
    await db.query(
      `UPDATE api_keys SET last_used_at = now()
        WHERE id = ANY ($1::uuid[]) AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
      [stale, precisionSeconds],
    );
  }
  const byHash = new Map(
    rows.map((key): [string, Principal] => [
      key.token_hash,
      {
        keyId: key.id,
        accountId: key.account_id,
        currency: key.currency,
        webhookEvents: key.has_webhook ? (key.webhook_events ?? MESSAGE_EVENT_TYPES) : [],
        sendDefaults: sendDefaultsOf(key),
      },
    ]),
  );
  return hashes.map((hash) => (hash === null ? null : (byHash.get(hash) ?? null)));
}

/** One key: see authenticateMany. */
export async function authenticate(
  db: Queryable,
  token: string,
  precisionSeconds: number,
): Promise<Principal | null> {
  const [principal] = await authenticateMany(db, [token], precisionSeconds);
  return principal ?? null;
}
