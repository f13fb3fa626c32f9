import { type Pool, withTransaction } from "../db/pool.ts";
import { createAccount } from "./accounts.ts";
import { addSenderId } from "./sender-ids.ts";

export const DEV_SENDER_ID = "SHIRI";
export const DEV_OPENING_BALANCE = 1_000_000; // 100.00 USD in ten-thousandths

/**
 * On the first start of an empty embedded database, an account to try the API with: its key
 * can only be shown now (only its hash is kept), so the caller prints it.
 */
export async function createDevAccountIfEmpty(pool: Pool): Promise<{
  accountId: string;
  apiKey: string;
  senderId: string;
  balance: number;
  currency: string;
} | null> {
  return withTransaction(pool, async (tx) => {
    // Two processes starting at once on a fresh database must not both create one.
    await tx.query("SELECT pg_advisory_xact_lock(7426002)");
    const { rowCount } = await tx.query("SELECT 1 FROM accounts LIMIT 1");
    if (rowCount) return null;
    const { account, key } = await createAccount(tx, {
      name: "Development",
      currency: "USD",
      openingBalance: DEV_OPENING_BALANCE,
    });
    await addSenderId(tx, account.id, DEV_SENDER_ID, "verified");
    return {
      accountId: account.id,
      apiKey: key.token,
      senderId: DEV_SENDER_ID,
      balance: DEV_OPENING_BALANCE,
      currency: account.currency,
    };
  });
}
