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

export async function findAccount(db: Queryable, accountId: string): Promise<Account | null> {
  const { rows } = await db.query<Account>("SELECT id, name, currency FROM accounts WHERE id = $1", [
    accountId,
  ]);
  return rows[0] ?? null;
}
