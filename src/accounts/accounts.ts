import { randomUUID } from "node:crypto";
import type { Queryable, Tx } from "../db/pool.ts";
import { topUp } from "../ledger/ledger.ts";
import { type CreatedApiKey, createApiKey } from "./api-keys.ts";

export interface Account {
  id: string;
  name: string;
  currency: string;
}

/** Creates an account with its first key and, when given, an opening top-up. */
export async function createAccount(
  tx: Tx,
  input: { name: string; currency: string; openingBalance: number },
): Promise<{ account: Account; key: CreatedApiKey }> {
  const account = { id: randomUUID(), name: input.name, currency: input.currency };
  await tx.query("INSERT INTO accounts (id, name, currency) VALUES ($1, $2, $3)", [
    account.id,
    account.name,
    account.currency,
  ]);
  await tx.query("INSERT INTO account_balances (account_id) VALUES ($1)", [account.id]);
  if (input.openingBalance > 0) await topUp(tx, account.id, input.openingBalance);
  const key = await createApiKey(tx, account.id, "default");
  return { account, key };
}

export async function findAccount(
  db: Queryable,
  accountId: string,
): Promise<(Account & { created_at: Date }) | null> {
  const { rows } = await db.query<Account & { created_at: Date }>(
    "SELECT id, name, currency, created_at FROM accounts WHERE id = $1",
    [accountId],
  );
  return rows[0] ?? null;
}

export interface AccountListing extends Account {
  created_at: Date;
  /** Available balance in ten-thousandths. */
  available: number;
}

/** Every account, oldest first, with its available balance (held needs its messages: see balanceOf). */
export async function listAccounts(db: Queryable): Promise<AccountListing[]> {
  const { rows } = await db.query<AccountListing>(
    `SELECT a.id, a.name, a.currency, a.created_at, b.balance AS available
       FROM accounts a JOIN account_balances b ON b.account_id = a.id
      ORDER BY a.created_at, a.id`,
  );
  return rows;
}
