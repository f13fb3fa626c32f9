import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (3) Late submit_sm_resp: Econet answers every submit twice the response timeout late, inside
 * the 3 × window. Each late answer proves the carrier took the segment, so none is sent again.
 */
const TIMEOUT_MS = 500;
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({ env: { SMPP_ECONET_RESPONSE_TIMEOUT_MS: String(TIMEOUT_MS) } });
});
afterAll(() => h?.stop());

describe("fault: late submit_sm_resp", () => {
  it("records late answers and sends nothing twice", async () => {
    h.sims.get("econet").setBehaviour({ submitLatencyMs: TIMEOUT_MS * 2 });
    const ids = await h.bulk(
      [...numbers("econet", 40, 0), ...numbers("netone", 20, 0), ...numbers("telecel", 20, 0)],
      "late answers",
    );
    const report = await checkInvariants(h, {
      scenario: "late answers",
      ids,
      finalWithinMs: 30_000,
      allowedResends: 0,
    });
    // The fault really happened: every Econet answer came late and was recorded.
    expect(report.counted.lateRecorded).toBeGreaterThanOrEqual(40);
  });
});
