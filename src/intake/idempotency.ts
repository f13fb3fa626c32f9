import { createHash } from "node:crypto";
import type { Request } from "express";
import { z } from "zod";
import type { Queryable, Tx } from "../db/pool.ts";
import { ApiError } from "./errors.ts";

/**
 * Idempotency-Key (an extension): the same key and body within the retention window answer
 * the original response, with no new message and no new charge. A key names one request of its
 * account, whichever send endpoint it went to: the same key on another endpoint is a conflict,
 * as another body is. The key row is written in the send's own transaction, after a lock on the
 * account's key, so of two racing requests the second waits for the first and then replays it (or
 * conflicts); if the first rolls back (bad sender, no balance) the second proceeds.
 */
const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;

/** The sends that take an Idempotency-Key, as their rows name them. */
export const IDEMPOTENT_ENDPOINTS = ["sms", "sms/bulk", "sms/batch"] as const;
export type IdempotentEndpoint = (typeof IDEMPOTENT_ENDPOINTS)[number];

/** The advisory lock class of key claims; any constant, the same in every process. */
const IDEMPOTENCY_LOCK_CLASS = 7_426_031;

/** The header as the OpenAPI document shows it on the send endpoints. */
export const idempotencyHeaders = z.object({
  "Idempotency-Key": z
    .string()
    .regex(KEY_PATTERN)
    .optional()
    .meta({
      description:
        "Extension: the same key and body within 24 hours answers the original response, with no new " +
        "message and no new charge; the same key with another body, or already used on another " +
        "send endpoint, is a 409.",
    }),
});

export function idempotencyKeyOf(req: Request): string | null {
  const key = req.headers["idempotency-key"];
  if (key === undefined) return null;
  if (typeof key !== "string" || !KEY_PATTERN.test(key)) throw new ApiError("invalidIdempotencyKey");
  return key;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export const requestHash = (body: unknown): string =>
  createHash("sha256").update(stableJson(body)).digest("hex");

export type Claim =
  | { kind: "claimed" }
  | { kind: "replay"; statusCode: number; response: unknown }
  | { kind: "conflict" };

export async function claimIdempotencyKey(
  tx: Tx,
  input: {
    accountId: string;
    endpoint: IdempotentEndpoint;
    key: string;
    requestHash: string;
    statusCode: number;
    response: unknown;
    ttlHours: number;
  },
): Promise<Claim> {
  // The rows of one key on two endpoints never meet in the table's unique key, so the account's
  // key is locked instead, until the send commits or rolls back. A 32-bit key: a collision only
  // makes two claims wait for each other.
  const lockKey = createHash("sha256").update(`${input.accountId}\u0000${input.key}`).digest().readInt32BE(0);
  await tx.query("SELECT pg_advisory_xact_lock($1, $2)", [IDEMPOTENCY_LOCK_CLASS, lockKey]);
  // A statement of its own after the lock, so that it sees what the lock's last holder committed.
  const { rowCount } = await tx.query(
    `INSERT INTO idempotency_keys (account_id, endpoint, key, request_hash, status_code, response)
     SELECT $1, $2, $3, $4, $5, $6
      WHERE NOT EXISTS (
        SELECT 1 FROM idempotency_keys
         WHERE account_id = $1 AND endpoint = ANY($8::text[]) AND key = $3
           AND created_at >= now() - make_interval(hours => $7))
     ON CONFLICT (account_id, endpoint, key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, status_code = EXCLUDED.status_code,
            response = EXCLUDED.response, created_at = now()
      WHERE idempotency_keys.created_at < now() - make_interval(hours => $7)`,
    [
      input.accountId,
      input.endpoint,
      input.key,
      input.requestHash,
      input.statusCode,
      JSON.stringify(input.response),
      input.ttlHours,
      IDEMPOTENT_ENDPOINTS.filter((endpoint) => endpoint !== input.endpoint),
    ],
  );
  if (rowCount === 1) return { kind: "claimed" };
  const { rows } = await tx.query<{ request_hash: string; status_code: number; response: unknown }>(
    `SELECT request_hash, status_code, response FROM idempotency_keys
      WHERE account_id = $1 AND endpoint = $2 AND key = $3
        AND created_at >= now() - make_interval(hours => $4)`,
    [input.accountId, input.endpoint, input.key, input.ttlHours],
  );
  // No live row of this endpoint: the key is another endpoint's.
  const found = rows[0];
  if (!found || found.request_hash !== input.requestHash) return { kind: "conflict" };
  return { kind: "replay", statusCode: found.status_code, response: found.response };
}

/** Replaces the answer a key claimed in this transaction replays (its send's final answer). */
export async function storeClaimedResponse(
  tx: Tx,
  key: { accountId: string; endpoint: IdempotentEndpoint; key: string },
  response: unknown,
): Promise<void> {
  await tx.query(
    "UPDATE idempotency_keys SET response = $4 WHERE account_id = $1 AND endpoint = $2 AND key = $3",
    [key.accountId, key.endpoint, key.key, JSON.stringify(response)],
  );
}

/**
 * Keys past their retention answer nothing any more (a replay after it is a new send): deleted a
 * bounded chunk at a time, oldest first, by the retention pass (src/retention), so the table stays
 * the size of a day's keys. A stored 10,000-recipient response is about 1 MB. Safe from several
 * processes at once (SKIP LOCKED).
 */
export async function deleteExpiredKeys(db: Queryable, ttlHours: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM idempotency_keys k USING (
       SELECT account_id, endpoint, key FROM idempotency_keys
        WHERE created_at < now() - make_interval(hours => $1)
        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED) old
      WHERE k.account_id = old.account_id AND k.endpoint = old.endpoint AND k.key = old.key`,
    [ttlHours, limit],
  );
  return rowCount ?? 0;
}
