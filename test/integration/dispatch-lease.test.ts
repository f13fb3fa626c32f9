import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceFromLedger } from "../../src/ledger/ledger.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";

/**
 * A batch that runs longer than its lease and its job's expiry (a slow carrier): pg-boss gives
 * the job to another run, but the batch keeps its lease alive, so the other run finds the
 * messages held and leaves them; nothing is submitted twice.
 */
let h: DispatchHarness;
beforeAll(async () => {
  h = await startDispatchHarness({
    env: {
      DISPATCH_LOCK_SECONDS: "2",
      DISPATCH_JOB_EXPIRE_SECONDS: "1",
      QUEUE_SUPERVISE_SECONDS: "1",
      SMPP_ECONET_RESPONSE_TIMEOUT_MS: "15000",
    },
  });
});
afterAll(async () => {
  await h?.stop();
});

describe("dispatch leases", () => {
  it("a batch outliving its lease and its job keeps its messages: one submit each", async () => {
    h.sims.get("econet").setBehaviour({ submitLatencyMs: 9_000 });
    const to = Array.from({ length: 5 }, (_, i) => `+26377${String(5_000_000 + i)}`);
    try {
      const ids = await h.bulk(to, "a slow carrier");
      await h.waitUntilSettled(ids, { delivered: true, timeoutMs: 40_000 });
      const states = await h.statusOf(ids);
      for (const id of ids) expect(states.get(id)).toMatchObject({ status: "success", delivered: true });
      // Claimed once: the runs pg-boss started again found the messages held and left them. (A
      // second claim would submit again; its answer would come only after this test's checks.)
      const { rows: claims } = await h.pool.query<{ attempts: number }>(
        "SELECT attempts FROM messages WHERE id = ANY($1)",
        [ids],
      );
      expect(claims.map((r) => r.attempts)).toEqual([1, 1, 1, 1, 1]);
      const wanted = new Set(to.map((n) => n.slice(1)));
      const submits = new Map<string, number>();
      for (const a of h.sims.get("econet").accepted)
        if (wanted.has(a.destination_addr))
          submits.set(a.destination_addr, (submits.get(a.destination_addr) ?? 0) + 1);
      expect(submits.size).toBe(5);
      expect([...submits.values()]).toEqual([1, 1, 1, 1, 1]);
      // The job did expire and run again meanwhile (so the lease was what kept the messages).
      const { rows } = await h.pool.query<{ retries: number }>(
        "SELECT max(retry_count)::int AS retries FROM pgboss.job WHERE name = 'dispatch-econet'",
      );
      expect(rows[0]?.retries).toBeGreaterThanOrEqual(1);
      const kept = await balanceNow(h.pool, h.acct.id);
      const recomputed = await balanceFromLedger(h.pool, h.acct.id);
      expect(kept?.held).toBe(recomputed.held);
    } finally {
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0 });
    }
  }, 60_000);
});
