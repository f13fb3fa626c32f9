import { randomUUID } from "node:crypto";
import type { Queryable, Tx } from "../db/pool.ts";

export const MAX_SENDER_IDS_PER_ACCOUNT = 3;
export const SENDER_ID_PATTERN = /^[A-Za-z0-9]{3,11}$/;

export type VerificationStatus = "verified" | "pending" | "rejected";

export interface SenderId {
  address: string;
  verification_status: VerificationStatus;
}

export class SenderIdLimitError extends Error {}

/**
 * Adds a sender id to the account with the given status; at most three per account. One the
 * account already has is left as it is (`added: false`, its current status): a status changes
 * only through setSenderIdStatus. The account row is locked so two concurrent adds cannot both
 * pass the count.
 */
export async function addSenderId(
  tx: Tx,
  accountId: string,
  address: string,
  status: VerificationStatus,
): Promise<SenderId & { added: boolean }> {
  await tx.query("SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", [accountId]);
  const existing = await findSenderId(tx, accountId, address);
  if (existing) return { ...existing, added: false };
  const { rows } = await tx.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM sender_ids WHERE account_id = $1",
    [accountId],
  );
  if ((rows[0]?.n ?? 0) >= MAX_SENDER_IDS_PER_ACCOUNT) {
    throw new SenderIdLimitError(`an account has at most ${MAX_SENDER_IDS_PER_ACCOUNT} sender ids`);
  }
  await tx.query(
    "INSERT INTO sender_ids (id, account_id, address, verification_status) VALUES ($1, $2, $3, $4)",
    [randomUUID(), accountId, address, status],
  );
  return { address, verification_status: status, added: true };
}

export async function findSenderId(
  db: Queryable,
  accountId: string,
  address: string,
): Promise<SenderId | null> {
  const { rows } = await db.query<SenderId>(
    "SELECT address, verification_status FROM sender_ids WHERE account_id = $1 AND address = $2",
    [accountId, address],
  );
  return rows[0] ?? null;
}

/** Sets a sender id's status (approval, rejection); its status before, or null when the account has no such sender id. */
export async function setSenderIdStatus(
  tx: Tx,
  accountId: string,
  address: string,
  status: VerificationStatus,
): Promise<VerificationStatus | null> {
  const { rows } = await tx.query<{ previous: VerificationStatus }>(
    `UPDATE sender_ids s SET verification_status = $3
       FROM (SELECT id, verification_status FROM sender_ids
              WHERE account_id = $1 AND address = $2 FOR UPDATE) old
      WHERE s.id = old.id
      RETURNING old.verification_status AS previous`,
    [accountId, address, status],
  );
  return rows[0]?.previous ?? null;
}

/** Removes a sender id, freeing its place among the three; what it was, or null when there was none. */
export async function removeSenderId(tx: Tx, accountId: string, address: string): Promise<SenderId | null> {
  const { rows } = await tx.query<SenderId>(
    "DELETE FROM sender_ids WHERE account_id = $1 AND address = $2 RETURNING address, verification_status",
    [accountId, address],
  );
  return rows[0] ?? null;
}

export async function listSenderIds(db: Queryable, accountId: string): Promise<SenderId[]> {
  const { rows } = await db.query<SenderId>(
    "SELECT address, verification_status FROM sender_ids WHERE account_id = $1 ORDER BY created_at, address",
    [accountId],
  );
  return rows;
}
