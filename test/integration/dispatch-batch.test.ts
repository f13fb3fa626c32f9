import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispatchQueue } from "../../src/queue/boss.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * The batch path: many jobs taken, claimed, submitted and settled together, with the guarantees
 * of one job at a time (exactly one submit per segment, money moved once, jobs completed).
 */
let h: DispatchHarness;
/** A small window, so that a batch of 150 messages has to respect it. */
const WINDOW = 8;
beforeAll(async () => {
  h = await startDispatchHarness({ env: { SMPP_ECONET_WINDOW_SIZE: String(WINDOW) } });
});
afterAll(async () => {
  await h?.stop();
});

const numbers = (prefix: string, n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `+263${prefix}${String(1_000_000 + from + i).padStart(7, "0")}`);

const worker = () => {
  const econet = h.t.service.dispatch?.workers.econet;
  if (!econet) throw new Error("the harness runs no econet worker");
  return econet;
};

/** Settle transactions a set of messages took: now() is the transaction's start, shared by its rows. */
async function settleTransactions(ids: readonly string[]): Promise<number> {
  const { rows } = await h.pool.query<{ n: number }>(
    "SELECT count(DISTINCT accepted_at)::int AS n FROM messages WHERE id = ANY($1)",
    [ids],
  );
  return rows[0]?.n ?? -1;
}

describe("dispatch in batches", () => {
  it("takes every job waiting as one batch: one claim, one settle, every job completed", async () => {
    await worker().stop();
    const singles: string[] = [];
    for (const to of numbers("77", 30, 0)) singles.push(await h.send(to, "one of thirty single sends"));
    const bulk = await h.bulk(numbers("77", 120, 100), "a bulk send of four jobs");
    // Answers that take a while, so that submits pile up to the window.
    h.sims.get("econet").setBehaviour({ submitLatencyMs: 20 });
    worker().start();
    const ids = [...singles, ...bulk];
    await h.waitUntilSettled(ids, { delivered: true, timeoutMs: 20_000 });
    h.sims.get("econet").setBehaviour({ submitLatencyMs: 0 });

    const states = await h.statusOf(ids);
    for (const id of ids) expect(states.get(id)).toMatchObject({ status: "success", delivered: true });
    // 30 single-send jobs and 3 bulk jobs, waiting together, were settled in one transaction.
    expect(await settleTransactions(ids)).toBe(1);
    const { rows } = await h.pool.query<{ state: string; n: number }>(
      "SELECT state, count(*)::int AS n FROM pgboss.job WHERE name = $1 GROUP BY state",
      [dispatchQueue("econet")],
    );
    expect(rows).toEqual([{ state: "completed", n: 33 }]);
    // Exactly one submit per destination.
    const destinations = new Set(
      [...numbers("77", 30, 0), ...numbers("77", 120, 100)].map((n) => n.slice(1)),
    );
    const submits = new Map<string, number>();
    for (const a of h.sims.get("econet").accepted)
      if (destinations.has(a.destination_addr))
        submits.set(a.destination_addr, (submits.get(a.destination_addr) ?? 0) + 1);
    expect(submits.size).toBe(150);
    expect([...submits.values()].every((n) => n === 1)).toBe(true);
    // The batch filled the window and never went past it.
    expect(h.sims.get("econet").stats.maxOutstanding).toBe(WINDOW);
    await expectLedgerBalanced(h.pool, h.acct.id);
  });

  it("receipts that come while their batch is still submitting are recorded in its settle, err codes kept", async () => {
    // Receipts right behind each answer, answers 10 ms apart in a window of 8: most receipts reach
    // Shiri while later messages of the same batch are still on the wire.
    h.sims.get("econet").setBehaviour({ receiptDelayMs: 0, submitLatencyMs: 10, outcomes: { UNDELIV: 1 } });
    try {
      const ids = await h.bulk(numbers("77", 40, 900), "held receipts");
      await h.waitUntilSettled(ids, { delivered: true });
      const { rows } = await h.pool.query<{ response: string; held: boolean }>(
        `SELECT m.operator_response AS response, p.receipt_at = p.accepted_at AS held
           FROM messages m JOIN message_parts p ON p.message_id = m.id WHERE m.id = ANY($1)`,
        [ids],
      );
      expect(rows).toHaveLength(40);
      for (const r of rows) expect(r.response).toMatch(/^UNDELIV err:\d+$/);
      // Recorded in the settle transaction itself (now() is the transaction's start).
      expect(rows.filter((r) => r.held).length).toBeGreaterThan(20);
      await expectLedgerBalanced(h.pool, h.acct.id);
    } finally {
      h.sims
        .get("econet")
        .setBehaviour({ receiptDelayMs: 200, submitLatencyMs: 0, outcomes: { DELIVRD: 1 } });
    }
  });

  it("a malformed job in the batch is cancelled alone; the others are delivered", async () => {
    await worker().stop();
    const ids = await h.bulk(numbers("78", 10), "beside a malformed job");
    const [bad] =
      (await h.t.service.boss.insert(dispatchQueue("econet"), [{ data: { messageIds: ["not-a-uuid"] } }], {
        returnId: true,
      })) ?? [];
    worker().start();
    await h.waitUntilSettled(ids, { delivered: true });
    const states = await h.statusOf(ids);
    for (const id of ids) expect(states.get(id)).toMatchObject({ status: "success", delivered: true });
    await waitFor(
      async () =>
        (await h.pool.query("SELECT state FROM pgboss.job WHERE id = $1", [bad])).rows[0]?.state ===
        "cancelled",
      { what: "the malformed job to be cancelled" },
    );
    await expectLedgerBalanced(h.pool, h.acct.id);
  });

  it("when one job's messages cannot be recorded, the batch is settled job by job and the others commit", async () => {
    const poisoned = numbers("77", 1, 500)[0] as string;
    // A fault in this test's own database: recording this destination's segment fails.
    await h.pool.query(`
      CREATE FUNCTION refuse_poisoned() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM messages WHERE id = NEW.message_id AND "to" = '${poisoned}') THEN
          RAISE EXCEPTION 'poisoned segment';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_poisoned BEFORE INSERT ON message_parts FOR EACH ROW EXECUTE FUNCTION refuse_poisoned();`);
    try {
      await worker().stop();
      const good = await h.bulk(numbers("77", 20, 600), "settled although a neighbour fails");
      const bad = await h.send(poisoned, "cannot be recorded");
      worker().start();
      await h.waitUntilSettled(good, { delivered: true, timeoutMs: 20_000 });
      const states = await h.statusOf([...good, bad]);
      for (const id of good) expect(states.get(id)).toMatchObject({ status: "success", delivered: true });
      expect(states.get(bad)?.status).toBe("processing");
      const { rows } = await h.pool.query<{ state: string }>(
        "SELECT state FROM pgboss.job WHERE name = $1 AND data->'messageIds' ? $2",
        [dispatchQueue("econet"), bad],
      );
      expect(rows.map((r) => r.state)).toContain("retry");
      await expectLedgerBalanced(h.pool, h.acct.id);
    } finally {
      await h.pool.query("DROP TRIGGER refuse_poisoned ON message_parts; DROP FUNCTION refuse_poisoned()");
    }
  });
});
