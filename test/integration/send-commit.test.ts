import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "../../src/db/pool.ts";
import { InsufficientBalanceError } from "../../src/ledger/ledger.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { prepareSend } from "../../src/sending/prepare-send.ts";
import { UnapprovedSenderError } from "../../src/sending/record-send.ts";
import { SendCommitter } from "../../src/sending/send-committer.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { relayTo } from "../support/postgres-relay.ts";
import { call, startTestService, type TestService } from "../support/service.ts";

/** Group commit of sends: an account's sends that wait together are written in one transaction. */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.stop();
});

/** One segment to an econet number costs 450 (USD ten-thousandths; carriers/econet.ts). */
const PRICE = 450;

const committer = (pool = t.service.pool) =>
  new SendCommitter(pool, t.service.boss, {
    maxSends: 200,
    maxMessages: 2_000,
    maxOpen: 2,
    dispatchBatchSize: 50,
  });

const single = (accountId: string, n: number, from = "SHIRI") => ({
  send: prepareSend({
    accountId,
    currency: "USD",
    from,
    body: `group commit ${n}`,
    recipients: [`+26377${String(2_000_000 + n)}`],
    webhookUrl: null,
    webhookEvents: null,
    bulk: false,
  }),
  accountWebhookEvents: [],
});

/** Transactions the account's holds were written in: now() is the transaction's start. */
async function holdTransactions(accountId: string): Promise<number> {
  const { rows } = await t.service.pool.query<{ n: number }>(
    "SELECT count(DISTINCT created_at)::int AS n FROM ledger_entries WHERE account_id = $1 AND kind = 'hold'",
    [accountId],
  );
  return rows[0]?.n ?? -1;
}

describe("group commit of sends", () => {
  it("writes the sends that waited together in one transaction", async () => {
    const acct = await t.account({ balance: 100 * PRICE });
    const sends = committer();
    // The first send starts a transaction at once; the 19 that come while it commits go together.
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, n) => sends.commit(single(acct.id, n))),
    );
    expect(results.every((r) => r.status === "fulfilled")).toBe(true);
    expect(await holdTransactions(acct.id)).toBe(2);
    expect((await balanceNow(t.service.pool, acct.id))?.held).toBe(20 * PRICE);
    await expectLedgerBalanced(t.service.pool, acct.id);
  });

  it("refuses only the sends the balance cannot cover, in the order they came", async () => {
    const acct = await t.account({ balance: 15 * PRICE });
    const sends = committer();
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, n) => sends.commit(single(acct.id, n))),
    );
    const outcome = results.map((r) => (r.status === "fulfilled" ? "ok" : r.reason));
    expect(outcome.slice(0, 15).every((o) => o === "ok")).toBe(true);
    expect(outcome.slice(15).every((o) => o instanceof InsufficientBalanceError)).toBe(true);
    expect((await balanceNow(t.service.pool, acct.id))?.available).toBe(0);
    const { rows } = await t.service.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE account_id = $1",
      [acct.id],
    );
    expect(rows[0]?.n).toBe(15);
    await expectLedgerBalanced(t.service.pool, acct.id);
  });

  it("refuses a send whose sender is not approved and commits the others with it", async () => {
    const acct = await t.account({ balance: 100 * PRICE });
    const sends = committer();
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, n) => sends.commit(single(acct.id, n, n === 6 ? "NOTOURS" : "SHIRI"))),
    );
    results.forEach((r, n) => {
      if (n === 6) expect(r.status === "rejected" && r.reason instanceof UnapprovedSenderError).toBe(true);
      else expect(r.status).toBe("fulfilled");
    });
    expect(await holdTransactions(acct.id)).toBe(2);
    expect((await balanceNow(t.service.pool, acct.id))?.held).toBe(9 * PRICE);
    await expectLedgerBalanced(t.service.pool, acct.id);
  });

  /**
   * Ten sends of the account through a relay that loses the answer to the second COMMIT: the first
   * send commits alone, the nine behind it commit together, and that answer never comes back.
   */
  async function tenSendsTheBatchAnswerLost(accountId: string, from = (_n: number) => "SHIRI") {
    const relay = await relayTo(t.database.url);
    const pool = createPool(relay.url, 2);
    try {
      const sends = committer(pool);
      relay.loseCommitAnswer(2);
      return await Promise.allSettled(
        Array.from({ length: 10 }, (_, n) => sends.commit(single(accountId, n, from(n)))),
      );
    } finally {
      await pool.end();
      await relay.close();
    }
  }

  it("answers the sends of a commit whose answer was lost as they were written, never twice", async () => {
    const acct = await t.account({ balance: 100 * PRICE });
    const results = await tenSendsTheBatchAnswerLost(acct.id, (n) => (n === 6 ? "NOTOURS" : "SHIRI"));
    // Before, each send of the batch was tried again alone, met its own committed rows, and
    // rejected with a duplicate key (a 500 over HTTP, for a send that will go out).
    results.forEach((r, n) => {
      if (n === 6) expect(r.status === "rejected" && r.reason instanceof UnapprovedSenderError).toBe(true);
      else expect(r.status).toBe("fulfilled");
    });
    const { rows } = await t.service.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE account_id = $1",
      [acct.id],
    );
    expect(rows[0]?.n).toBe(9);
    expect((await balanceNow(t.service.pool, acct.id))?.held).toBe(9 * PRICE);
    await expectLedgerBalanced(t.service.pool, acct.id);
  });

  it("waits out a commit still under way when its answer was lost, then answers it as written", async () => {
    // A COMMIT that takes a second (an fsync stall, a synchronous standby): a deferred trigger.
    await t.service.pool.query(`
      CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON messages DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW WHEN (NEW.body = 'group commit 5') EXECUTE FUNCTION slow_commit();`);
    try {
      const acct = await t.account({ balance: 100 * PRICE });
      const results = await tenSendsTheBatchAnswerLost(acct.id);
      // Before, the look-up saw none of the batch yet: each send, tried alone, met its own rows.
      expect(results.map((r) => r.status)).toEqual(Array(10).fill("fulfilled"));
      expect((await balanceNow(t.service.pool, acct.id))?.held).toBe(10 * PRICE);
      await expectLedgerBalanced(t.service.pool, acct.id);
    } finally {
      await t.service.pool.query("DROP TRIGGER slow_commit ON messages; DROP FUNCTION slow_commit()");
    }
  });

  it("over HTTP: concurrent single sends of one account are all accepted once and billed once", async () => {
    const acct = await t.account({ balance: 1_000 * PRICE });
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, n) =>
        call(t.base, "POST", "/api/v1/sms", {
          headers: acct.headers,
          body: { to: `+26378${String(3_000_000 + n)}`, from: "SHIRI", message: "concurrent" },
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(60).fill(202));
    const ids = new Set(responses.map((r) => (r.body as { id: string }).id));
    const { rows } = await t.service.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND id = ANY($2)",
      [acct.id, [...ids]],
    );
    expect(rows[0]?.n).toBe(60);
    expect((await balanceNow(t.service.pool, acct.id))?.held).toBe(60 * PRICE);
    await expectLedgerBalanced(t.service.pool, acct.id);
  });
});
