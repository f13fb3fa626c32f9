import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (10) generic_nack: NetOne answers a fifth of the submits with generic_nack ESME_RSYSERR (a
 * transient system error) instead of submit_sm_resp. The nacked submit was not taken: Shiri
 * retries it, and nothing reaches the handset twice.
 */
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({ behaviour: { netone: { genericNackRate: 0.2, genericNackStatus: 0x08 } } });
});
afterAll(() => h?.stop());

describe("fault: generic_nack for submits", () => {
  it("retries the nacked submits and sends nothing twice", async () => {
    const netone = h.sims.get("netone");
    const ids = await h.bulk([...numbers("netone", 60, 0), ...numbers("econet", 20, 0)], "nacked");
    const report = await checkInvariants(h, {
      scenario: "generic_nack",
      ids,
      finalWithinMs: 60_000,
      allowedResends: 0,
    });
    expect(netone.nacked.length, "nothing was nacked").toBeGreaterThan(0);
    expect(report.success).toBe(ids.length);
  });
});
