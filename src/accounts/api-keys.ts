import { createHash, randomUUID } from "node:crypto";
import type { Pool, Queryable } from "../db/pool.ts";
import { MESSAGE_EVENT_TYPES, type MessageEventType } from "../events/events.ts";
import { keyChangesSettled } from "./key-cache.ts";
import { isScope, type KeyScopes, type Scope } from "./scopes.ts";
import { type SendDefaults, sendDefaultsOf } from "./send-defaults.ts";
import { isWellFormedToken, newToken } from "./token-format.ts";

/** Key secrets look like `shr_` + 43 base64url characters (32 random bytes). */

export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");
export { isWellFormedToken };

export interface CreatedApiKey {
  id: string;
  name: string;
  token: string;
  account_id: string;
  created_at: Date;
  /** Null: every scope. */
  scopes: Scope[] | null;
  /** Null: any client address. */
  allowed_ips: string[] | null;
  expires_at: Date | null;
}

/** What a new key may do, from where and until when; none given is every scope, anywhere, for ever. */
export interface KeyPolicy {
  scopes?: KeyScopes;
  allowedIps?: readonly string[] | null;
  expiresAt?: Date | null;
}

export async function createApiKey(
  db: Queryable,
  accountId: string,
  name: string,
  policy: KeyPolicy = {},
): Promise<CreatedApiKey> {
  const token = newToken();
  const id = randomUUID();
  const scopes = policy.scopes ? [...policy.scopes] : null;
  const allowedIps = policy.allowedIps ? [...policy.allowedIps] : null;
  const expiresAt = policy.expiresAt ?? null;
  const { rows } = await db.query<{ created_at: Date; allowed_ips: string[] | null }>(
    `INSERT INTO api_keys (id, account_id, name, token_hash, scopes, allowed_ips, expires_at, checksummed)
     VALUES ($1, $2, $3, $4, $5, $6::cidr[], $7, true) RETURNING created_at, allowed_ips::text[]`,
    [id, accountId, name, hashToken(token), scopes, allowedIps, expiresAt],
  );
  const row = rows[0] as { created_at: Date; allowed_ips: string[] | null };
  return {
    id,
    name,
    token,
    account_id: accountId,
    created_at: row.created_at,
    scopes,
    allowed_ips: row.allowed_ips,
    expires_at: expiresAt,
  };
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
  /** Extension: the key's scopes, null for every scope. */
  Scopes: Scope[] | null;
  /** Extension: the client addresses it may be used from, null for any. */
  AllowedIps: string[] | null;
  /** Extension: when it stops working, null for never. */
  ExpiresAt: Date | null;
}

export async function listApiKeys(db: Queryable, accountId: string): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<ApiKeyRecord>(
    `SELECT id AS "ID", created_at AS "CreatedAt", updated_at AS "UpdatedAt", deleted_at AS "DeletedAt",
            name AS "Name", token_hash AS "TokenHash", account_id AS "AccountId", active AS "Active",
            last_used_at AS "LastUsedAt", scopes AS "Scopes", allowed_ips::text[] AS "AllowedIps",
            expires_at AS "ExpiresAt"
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
  /** Null: every scope. */
  scopes: Scope[] | null;
  allowed_ips: string[] | null;
  expires_at: Date | null;
}

export async function apiKeySummaries(db: Queryable, accountId: string): Promise<ApiKeySummary[]> {
  const { rows } = await db.query<ApiKeySummary>(
    `SELECT id AS api_key_id, name, active, created_at, last_used_at, deleted_at AS revoked_at, scopes,
            allowed_ips::text[] AS allowed_ips, expires_at
       FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
    [accountId],
  );
  return rows;
}

/**
 * Revokes a key of the account. "missing" when the account has no key with that id; "beyond" when
 * the revoking key's scopes do not cover the other key's (a narrow key never locks a wider one out).
 * Answers once no API process can still hold the key (keyChangesSettled): on the pool, committed.
 */
export async function revokeApiKey(
  pool: Pool,
  accountId: string,
  keyId: string,
  by: KeyScopes = null,
): Promise<"revoked" | "missing" | "beyond"> {
  const { rows } = await pool.query<{ scopes: Scope[] | null; revoked: boolean }>(
    `WITH target AS (SELECT id, scopes FROM api_keys WHERE id = $1 AND account_id = $2),
     revoked AS (
       UPDATE api_keys k
          SET active = false,
              updated_at = CASE WHEN k.active THEN now() ELSE k.updated_at END,
              deleted_at = COALESCE(k.deleted_at, now())
         FROM target t
        WHERE k.id = t.id
          AND ($3::text[] IS NULL OR (t.scopes IS NOT NULL AND t.scopes <@ $3::text[]))
        RETURNING k.id)
     SELECT t.scopes, EXISTS (SELECT 1 FROM revoked) AS revoked FROM target t`,
    [keyId, accountId, by === null ? null : [...by]],
  );
  const row = rows[0];
  if (!row) return "missing";
  if (!row.revoked) return "beyond";
  await keyChangesSettled();
  return "revoked";
}

/** What narrowing a key came to: its scopes after, or why it was left as it was. */
export type Narrowing =
  | { kind: "narrowed"; scopes: Scope[] }
  | { kind: "notFound" }
  | { kind: "nothingLeft"; held: KeyScopes };

/**
 * Narrows a key to the scopes it holds among `scopes` (never more). A key that would be left no
 * scope is left as it was: it could do nothing, and revoking it says so plainly. Answers once no
 * API process can still hold the wider key (keyChangesSettled).
 */
export async function narrowApiKey(
  pool: Pool,
  accountId: string,
  keyId: string,
  scopes: readonly Scope[],
): Promise<Narrowing> {
  const { rows } = await pool.query<{ held: Scope[] | null; narrowed: Scope[]; changed: boolean }>(
    `WITH key AS (
       SELECT id, scopes AS held,
              ARRAY(SELECT unnest($3::text[]) INTERSECT SELECT unnest(coalesce(scopes, $3::text[]))) AS narrowed
         FROM api_keys WHERE id = $1 AND account_id = $2 FOR UPDATE),
     changed AS (
       UPDATE api_keys SET scopes = key.narrowed, updated_at = now()
         FROM key WHERE api_keys.id = key.id AND cardinality(key.narrowed) > 0 RETURNING api_keys.id)
     SELECT held, narrowed, EXISTS (SELECT FROM changed) AS changed FROM key`,
    [keyId, accountId, [...scopes]],
  );
  const row = rows[0];
  if (!row) return { kind: "notFound" };
  if (!row.changed) return { kind: "nothingLeft", held: row.held };
  await keyChangesSettled();
  return { kind: "narrowed", scopes: row.narrowed };
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
  /** The key's scopes (null: every scope), the addresses it may be used from (null: any), its end. */
  scopes: KeyScopes;
  allowedIps: readonly string[] | null;
  expiresAt: Date | null;
  /** The account's defaults for its sends (smart encoding, a delivery window). */
  sendDefaults: SendDefaults;
}

/**
 * Looks keys up by hash: many tokens in one statement (the API batches the requests in flight and
 * keeps each answer KEY_KEPT_MS, see src/intake/auth.ts), each answered by its principal or null.
 * LastUsedAt is refreshed when it is older than `precisionSeconds`, which keeps a busy key from
 * turning every request into a write on one hot row. Whatever this reads, a change to it must
 * answer only after keyChangesSettled, as revokeApiKey's does
 * (docs/decisions/0035-keys-kept-a-quarter-second.md).
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
    scopes: string[] | null;
    allowed_ips: string[] | null;
    expires_at: Date | null;
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
        scopes: key.scopes === null ? null : key.scopes.filter(isScope),
        allowedIps: key.allowed_ips,
        expiresAt: key.expires_at,
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

/**
 * Whether an active key made before secrets carried a checksum may still authenticate: while one
 * does, a token with a wrong checksum may be it and is looked up. Once none does, none can come
 * back (every key made since has a checksum), so the answer is kept for good; until then it is
 * asked again at most once a minute.
 */
export class LegacyKeys {
  private known: { present: boolean; at: number } | null = null;

  constructor(private readonly db: Queryable) {}

  async present(): Promise<boolean> {
    if (this.known && (!this.known.present || Date.now() - this.known.at < 60_000)) return this.known.present;
    const { rows } = await this.db.query<{ present: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM api_keys WHERE active AND NOT checksummed
                        AND (expires_at IS NULL OR expires_at > now())) AS present`,
    );
    this.known = { present: rows[0]?.present ?? true, at: Date.now() };
    return this.known.present;
  }
}
