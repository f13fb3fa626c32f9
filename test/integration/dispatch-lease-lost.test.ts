import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A batch whose lease is taken over while it runs (here by hand: another owner written over the
 * batch's, as a run that claimed the messages after the lease had lapsed would). The batch notices
 * at its next renewal, counts it, withdraws the submits still waiting for the wire, and its settle
 * moves nothing the other owner holds — but records the segments the carrier did accept, so the
 * message's next run sends them no more.
 */
let h: DispatchHarness;
beforeAll(async () => {
  h = await startDispatchHarness({
    env: {
      DISPATCH_LOCK_SECONDS: "2",
      // One submit at a time, so most of the batch is still waiting when the lease is taken.
      SMPP_ECONET_WINDOW_SIZE: "1",
      SMPP_ECONET_RESPONSE_TIMEOUT_MS: "15000",
    },
  });
});
afterAll(async () => {
  await h?.stop();
});

const lostCount = async (reason: string) =>
  (await h.t.service.metrics.leasesLost.get()).values.find(
    (v) => v.labels.operator === "econet" && v.labels.reason === reason,
  )?.value ?? 0;

describe("a dispatch lease taken over mid-batch", () => {
  it("is noticed and counted; the batch stops submitting and its settle moves nothing it no longer holds", async () => {
    const sim = h.sims.get("econet");
    sim.setBehaviour({ submitLatencyMs: 1_500 });
    const to = Array.from({ length: 5 }, (_, i) => `+26377${String(6_000_000 + i)}`);
    const wanted = new Set(to.map((n) => n.slice(1)));
    const submitted = () => sim.accepted.filter((a) => wanted.has(a.destination_addr));
    try {
      const ids = await h.bulk(to, "taken over");
      await waitFor(() => submitted().length >= 1, { timeoutMs: 15_000, what: "the first submit" });
      const thief = randomUUID();
      await h.pool.query(
        `UPDATE messages SET locked_by = $2, locked_until = now() + interval '1 hour'
          WHERE id = ANY($1) AND status = 'processing'`,
        [ids, thief],
      );
      // The batch settles: its job completes, with the messages left to their new holder.
      await waitFor(
        async () => {
          const { rows } = await h.pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'dispatch-econet' AND state = 'completed'",
          );
          return (rows[0]?.n ?? 0) >= 1;
        },
        { timeoutMs: 20_000, intervalMs: 100, what: "the batch to settle" },
      );
      // Found taken at a renewal (or, on a machine stalled past a whole lease, lapsed first).
      expect((await lostCount("taken")) + (await lostCount("lapsed"))).toBe(5);
      // Withdrawn: the submits still waiting for the wire never went (one more was on it, at most).
      const sentByFirstRun = submitted().length;
      expect(sentByFirstRun).toBeGreaterThanOrEqual(1);
      expect(sentByFirstRun).toBeLessThanOrEqual(3);
      const { rows: held } = await h.pool.query<{ status: string; locked_by: string; billing: string }>(
        "SELECT status, locked_by::text, billing FROM messages WHERE id = ANY($1)",
        [ids],
      );
      expect(held).toHaveLength(5);
      for (const r of held) expect(r).toEqual({ status: "processing", locked_by: thief, billing: "held" });
      // What the carrier accepted is on record all the same.
      const { rows: parts } = await h.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM message_parts WHERE message_id = ANY($1)",
        [ids],
      );
      expect(parts[0]?.n).toBe(sentByFirstRun);
      // Nothing captured nor released for them: their billing says held, and the ledger agrees.
      const { rows: releases } = await h.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM ledger_entries WHERE message_id = ANY($1) AND kind = 'release'",
        [ids],
      );
      expect(releases[0]?.n).toBe(0);
      await expectLedgerBalanced(h.pool, h.acct.id);

      // The other holder goes away (its lease runs out): the jobs the settle scheduled take the
      // messages up; those already accepted succeed without a second submit.
      sim.setBehaviour({ submitLatencyMs: 0 });
      await h.pool.query(
        "UPDATE messages SET locked_until = now() - interval '1 second' WHERE id = ANY($1)",
        [ids],
      );
      await h.waitUntilSettled(ids, { timeoutMs: 30_000 });
      const states = await h.statusOf(ids);
      for (const id of ids) expect(states.get(id)?.status).toBe("success");
      const perNumber = new Map<string, number>();
      for (const a of submitted())
        perNumber.set(a.destination_addr, (perNumber.get(a.destination_addr) ?? 0) + 1);
      expect(perNumber.size).toBe(5);
      expect([...perNumber.values()]).toEqual([1, 1, 1, 1, 1]);
      await expectLedgerBalanced(h.pool, h.acct.id);
    } finally {
      sim.setBehaviour({ submitLatencyMs: 0 });
    }
  }, 90_000);
});
