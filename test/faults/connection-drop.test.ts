import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (5) The TCP connection dropped with the window full: Econet answers slowly, so the 50-submit
 * window fills, and the SMSC cuts the connection when the 50th submit arrives, twice. The submits
 * on the wire are lost unanswered (never accepted); Shiri binds again and sends them again.
 */
const WINDOW = 50;
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({
    behaviour: { econet: { submitLatencyMs: 300, dropAfterSubmits: WINDOW } },
    env: { SMPP_ECONET_WINDOW_SIZE: String(WINDOW) },
  });
});
afterAll(() => h?.stop());

describe("fault: connection dropped with the window full", () => {
  it("sends again only what was on the wire and finishes everything", async () => {
    const econet = h.sims.get("econet");
    const connectionsBefore = econet.stats.connections;
    const ids = await h.bulk(numbers("econet", 200, 0), "window full");
    // Two drops: the second connection also reached a full window before it was cut.
    await waitFor(() => econet.stats.connections >= connectionsBefore + 2, {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: "two connections dropped with the window full",
    });
    econet.setBehaviour({ dropAfterSubmits: null, submitLatencyMs: 0 });
    expect(econet.stats.maxOutstanding).toBeGreaterThanOrEqual(WINDOW - 1);
    await checkInvariants(h, {
      scenario: "connection dropped, window full",
      ids,
      finalWithinMs: 60_000,
      // A submit answered just before the cut whose answer the cut swallowed: at most a window a drop.
      allowedResends: 2 * WINDOW,
    });
  });
});
