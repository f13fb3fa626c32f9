import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (12) A lease running out mid-job: Econet answers each submit after 5 s, longer than the
 * dispatch lease (2 s) and the job's expiry (1 s), so pg-boss starts the job again while its
 * batch is still on the wire. The batch keeps its lease alive; the second run leaves the
 * messages alone, and none is sent twice.
 */
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({
    behaviour: { econet: { submitLatencyMs: 5_000 } },
    env: {
      DISPATCH_LOCK_SECONDS: "2",
      DISPATCH_JOB_EXPIRE_SECONDS: "1",
      // pg-boss looks for expired jobs every second, so the job surely expires within the batch.
      QUEUE_SUPERVISE_SECONDS: "1",
      SMPP_ECONET_RESPONSE_TIMEOUT_MS: "15000",
    },
  });
});
afterAll(() => h?.stop());

describe("fault: lease and job expiring mid-job", () => {
  it("keeps the messages with the batch that holds them: one submit each", async () => {
    const ids = await h.bulk([...numbers("econet", 20, 0), ...numbers("netone", 20, 0)], "slow carrier");
    const invariants = {
      scenario: "lease expired mid-job",
      ids,
      finalWithinMs: 60_000,
      allowedResends: 0,
    };
    const report = await checkInvariants(h, invariants);
    expect(report.success).toBe(ids.length);
    // The job did expire and was claimed again: the lease, not luck, kept the messages. The
    // second claim can come after the messages are final (the expired job waits out its retry
    // delay), so it is waited for, and the invariants are checked again once it has run.
    await waitFor(
      async () => {
        const { rows } = await h.sql.query<{ retried: number; open: number }>(
          `SELECT count(*) FILTER (WHERE retry_count >= 1)::int AS retried,
                  count(*) FILTER (WHERE state IN ('created', 'retry', 'active'))::int AS open
             FROM pgboss.job WHERE name = 'dispatch-econet'`,
        );
        return (rows[0]?.retried ?? 0) >= 1 && rows[0]?.open === 0;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: "the expired dispatch job claimed again and settled" },
    );
    await checkInvariants(h, invariants);
    const { rows: claims } = await h.sql.query<{ attempts: number }>(
      "SELECT max(attempts)::int AS attempts FROM messages WHERE id = ANY($1)",
      [ids],
    );
    expect(claims[0]?.attempts, "a message was claimed twice").toBe(1);
  });
});
