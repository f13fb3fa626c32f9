import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (9) Missing submit_sm_resp: Econet takes a tenth of the submits (it delivers them and sends
 * their receipts) but never answers them. Shiri cannot know it took them: once the late-answer
 * window has passed it sends each again. That is the documented in-flight window, and the only
 * resends: exactly one per answer that never came.
 */
const TIMEOUT_MS = 500;
const LONG = `${"A message of two segments whose answers may go missing one by one. ".repeat(3)}end`;
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({
    behaviour: { econet: { unansweredRate: 0.1 } },
    // A segment left unanswered twice would fail NO_ANSWER (late-answers.test.ts): here every
    // message finishes, so that the resends can be counted one for one.
    env: { SMPP_ECONET_RESPONSE_TIMEOUT_MS: String(TIMEOUT_MS), DISPATCH_MAX_UNANSWERED_SENDS: "10" },
  });
});
afterAll(() => h?.stop());

describe("fault: submit_sm_resp that never comes", () => {
  it("sends again only the segments whose answer never came, and finishes everything", async () => {
    const econet = h.sims.get("econet");
    // Half of Econet's messages have two segments: an answer missing for one segment resends that
    // segment only, never its message's other one.
    const ids = [
      ...(await h.bulk([...numbers("econet", 40, 0), ...numbers("telecel", 20, 0)], "no answer")),
      ...(await h.bulk(numbers("econet", 40, 40), LONG)),
    ];
    const report = await checkInvariants(h, {
      scenario: "missing answers",
      ids,
      finalWithinMs: 60_000,
      allowedResends: () => econet.unanswered.length,
      mayRepeat: () => new Set(econet.unanswered.map((a) => `+${a.destination_addr}`)),
      resendsCountedAsUnknown: true,
    });
    expect(econet.accepted.filter((a) => a.concat !== null).length).toBeGreaterThanOrEqual(80);
    expect(econet.unanswered.length, "every answer came").toBeGreaterThan(0);
    // Each unanswered submit was sent again (dropping it could lose a paid message), counted as unknown.
    expect(report.resends).toBe(econet.unanswered.length);
    expect(report.counted.unknown).toBeGreaterThanOrEqual(econet.unanswered.length);
    expect(report.success).toBe(ids.length);
  });
});
