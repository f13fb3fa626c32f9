import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (11) The SMSC unbinds of its own accord mid-flow, twice: Telecel answers slowly, so submits
 * are on the wire when its unbind comes. Shiri answers the unbind, binds again and finishes;
 * only the submits on the wire at the unbind may reach the carrier twice.
 */
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({ behaviour: { telecel: { submitLatencyMs: 100 } } });
});
afterAll(() => h?.stop());

describe("fault: SMSC-initiated unbind", () => {
  it("answers the unbind, binds again and sends again only what was on the wire", async () => {
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
      allowedResends: telecel.pendingAtUnbind.length,
      mayRepeat: new Set(telecel.pendingAtUnbind.map((d) => `+${d}`)),
    });
    expect(telecel.stats.unbindRespsReceived, "Shiri did not answer the unbinds").toBe(2);
    expect(report.success).toBe(ids.length);
    console.info(
      `[faults] SMSC unbind: ${telecel.pendingAtUnbind.length} on the wire at the unbinds, ${report.resends} resent`,
    );
  });
});
