import { describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.ts";
import { BatchLease } from "../../src/dispatch/batch-lease.ts";
import { createLogger } from "../../src/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A batch's lease when its renewals fail (the database away, too slow): once a whole lease has
 * passed without one, another run may have claimed the messages, so the batch may put none of
 * them on the wire any more. Counted and logged. (A lease found taken: dispatch-lease-lost.test.ts.)
 */
function lease(query: () => Promise<unknown>, lockSeconds = 0.3) {
  const metrics = createMetrics();
  const pool = { query } as unknown as Pool;
  const l = new BatchLease({
    pool,
    operator: "econet",
    logger: createLogger("silent"),
    metrics,
    lockSeconds,
  });
  return { l, metrics };
}

const count = async (metrics: ReturnType<typeof createMetrics>, name: "leasesLost" | "leaseRenewalsFailed") =>
  (await metrics[name].get()).values.reduce((n, v) => n + v.value, 0);

describe("a dispatch batch's lease", () => {
  it("lapses after a whole lease without a renewal: its messages are no longer submitted", async () => {
    const { l, metrics } = lease(() => Promise.reject(new Error("database unreachable")));
    l.keep(["a", "b"]);
    try {
      expect(l.owns("a")).toBe(true);
      await waitFor(async () => (await count(metrics, "leaseRenewalsFailed")) >= 2, { timeoutMs: 2_000 });
      await waitFor(() => !l.owns("a"), { timeoutMs: 2_000, what: "the lease to lapse" });
      expect(l.owns("b")).toBe(false);
      const lost = (await metrics.leasesLost.get()).values.filter((v) => v.labels.reason === "lapsed");
      expect(lost.map((v) => v.value)).toEqual([2]);
    } finally {
      l.stop();
    }
  });

  it("is kept while renewals succeed, and lost for a message another run holds", async () => {
    const { l, metrics } = lease(() => Promise.resolve({ rows: [{ id: "a" }] }), 1);
    l.keep(["a", "b"]);
    try {
      await waitFor(() => !l.owns("b"), { timeoutMs: 2_000, what: "b found taken" });
      // Well past one lease: "a" is renewed every third of it, so it stays the batch's.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(l.owns("a")).toBe(true);
      const lost = (await metrics.leasesLost.get()).values.filter((v) => v.value > 0);
      expect(lost.map((v) => [v.labels.reason, v.value])).toEqual([["taken", 1]]);
      // The settle's own count leaves a message already counted alone.
      l.lostAtSettle(["b"]);
      expect(await count(metrics, "leasesLost")).toBe(1);
    } finally {
      l.stop();
    }
  });
});
