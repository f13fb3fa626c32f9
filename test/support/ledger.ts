import { expect } from "vitest";
import type { Queryable } from "../../src/db/pool.ts";
import { balanceFromLedger } from "../../src/ledger/ledger.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";

/**
 * The account's balance as kept (available on its balance row, held by its messages) equals what
 * its ledger rows add up to. Read in two statements: call it when nothing moves the account's money.
 */
export async function expectLedgerBalanced(db: Queryable, accountId: string): Promise<void> {
  const kept = await balanceNow(db, accountId);
  const fromLedger = await balanceFromLedger(db, accountId);
  expect({ available: kept?.available, held: kept?.held }).toEqual(fromLedger);
}

/**
 * A test that moves an open message's times into the past makes it older than the open-messages
 * watermark may already be (src/lifecycle/open-mark.ts); had it been received then, it would have
 * held the watermark back. Moves the watermark back, as it would have stayed.
 */
export async function openMarkBack(db: Queryable): Promise<void> {
  await db.query("UPDATE upkeep_marks SET at = '-infinity' WHERE name = 'open_messages'");
}
