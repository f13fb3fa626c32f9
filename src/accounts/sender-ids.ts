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
 * Adds a sender id to the account; at most three per account. The account row is locked so
 * two concurrent adds cannot both pass the count.
 */
export async function addSenderId(
  tx: Tx,
  accountId: string,
  address: string,
  status: VerificationStatus,
): Promise<SenderId> {
  await tx.query("SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", [accountId]);
  const existing = await tx.query<SenderId>(
    "SELECT address, verification_status FROM sender_ids WHERE account_id = $1 AND address = $2",
    [accountId, address],
  );
  if (existing.rows[0]) {
    await tx.query("UPDATE sender_ids SET verification_status = $3 WHERE account_id = $1 AND address = $2", [
      accountId,
      address,
      status,
    ]);
    return { address, verification_status: status };
  }
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
  return { address, verification_status: status };
}

export async function listSenderIds(db: Queryable, accountId: string): Promise<SenderId[]> {
  const { rows } = await db.query<SenderId>(
    "SELECT address, verification_status FROM sender_ids WHERE account_id = $1 ORDER BY created_at, address",
    [accountId],
  );
  return rows;
}
