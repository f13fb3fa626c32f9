import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (11) The SMSC unbinds of its own accord mid-flow, twice: Telecel answers slowly, so submits
 * are on the wire when its unbind comes, and it still answers them before it closes. Shiri sends
 * nothing new, waits for those answers (bounded by the response timeout), then answers the
 * unbind, binds again and finishes: nothing is sent twice.
 */
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({ behaviour: { telecel: { submitLatencyMs: 100 } } });
});
afterAll(() => h?.stop());

describe("fault: SMSC-initiated unbind", () => {
  it("takes the answers on the wire, answers the unbind, binds again, sends nothing twice", async () => {
    const telecel = h.sims.get("telecel");
    const accepted = () => telecel.accepted.length;
    const before = accepted();
    const binds = telecel.stats.binds;
    const ids = await h.bulk([...numbers("telecel", 300, 0), ...numbers("netone", 30, 0)], "unbound");
    for (const [i, after] of [100, 200].entries()) {
      await waitFor(() => accepted() >= before + after, {
        timeoutMs: 30_000,
        intervalMs: 5,
        what: `${after} taken`,
      });
      expect(telecel.unbindAll(), "no bound session to unbind").toBeGreaterThan(0);
      await waitFor(() => telecel.stats.binds >= binds + i + 1 && telecel.boundSessions > 0, {
        timeoutMs: 30_000,
        what: "Shiri bound again",
      });
    }
    const report = await checkInvariants(h, {
      scenario: "SMSC unbind",
      ids,
      finalWithinMs: 60_000,
      // Answering at once and closing lost the answers on the wire: each was sent again.
      allowedResends: 0,
    });
    expect(telecel.stats.unbindRespsReceived, "Shiri did not answer the unbinds").toBe(2);
    expect(telecel.pendingAtUnbind.length, "nothing was on the wire at the unbinds").toBeGreaterThan(0);
    expect(report.success).toBe(ids.length);
    console.info(
      `[faults] SMSC unbind: ${telecel.pendingAtUnbind.length} on the wire at the unbinds, ${report.resends} resent`,
    );
  });
});
