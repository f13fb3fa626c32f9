import { expect } from "vitest";
import type { Queryable } from "../../src/db/pool.ts";
import { balanceFromLedger, balanceOf } from "../../src/ledger/ledger.ts";

/**
 * The account's balance as kept (available on its balance row, held by its messages) equals what
 * its ledger rows add up to. Held is read from every message of the account, not from the
 * open-messages watermark as the API reads it: a message left holding money behind the watermark
 * is what this must catch. Read in two statements: call it when nothing moves the account's money.
 */
export async function expectLedgerBalanced(db: Queryable, accountId: string): Promise<void> {
  const kept = await balanceOf(db, accountId, new Date(0));
  const fromLedger = await balanceFromLedger(db, accountId);
  expect({ available: kept?.available, held: kept?.held }).toEqual(fromLedger);
}
