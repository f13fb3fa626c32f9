import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (5) The TCP connection dropped with the window full: Econet answers slowly, so the 50-submit
 * window fills, and the SMSC cuts the connection when the 50th submit arrives, twice. Of the
 * submits on the wire, half had already been taken by the SMSC (accepted, delivered, receipted)
 * and only their answers are lost with the connection (`acceptOnDropRate`): the in-flight window
 * Shiri cannot close. It counts each as `unknown:connection_lost`, binds again and sends them again,
 * so those segments, and only those, reach the SMSC twice. Half the messages have two segments:
 * resends are counted per segment.
 */
const WINDOW = 50;
const LONG = `${"Segment one and segment two of a message too long for one SMS. ".repeat(3)}end`;
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({
    behaviour: { econet: { submitLatencyMs: 300, dropAfterSubmits: WINDOW, acceptOnDropRate: 0.5 } },
    env: { SMPP_ECONET_WINDOW_SIZE: String(WINDOW) },
  });
});
afterAll(() => h?.stop());

describe("fault: connection dropped with the window full", () => {
  it("sends again only what was on the wire, counts it, and finishes everything", async () => {
    expect(LONG.length).toBeGreaterThan(160);
    const econet = h.sims.get("econet");
    const connectionsBefore = econet.stats.connections;
    const ids = [
      ...(await h.bulk(numbers("econet", 100, 0), "window full")),
      ...(await h.bulk(numbers("econet", 100, 100), LONG)),
    ];
    // Two drops: the second connection also reached a full window before it was cut.
    await waitFor(() => econet.stats.connections >= connectionsBefore + 2, {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: "two connections dropped with the window full",
    });
    econet.setBehaviour({ dropAfterSubmits: null, submitLatencyMs: 0 });
    expect(econet.stats.maxOutstanding).toBeGreaterThanOrEqual(WINDOW - 1);
    const ours = new Set([...numbers("econet", 200, 0)].map((n) => n.slice(1)));
    const takenOnDrop = () => econet.acceptedOnDrop.filter((a) => ours.has(a.destination_addr)).length;
    const report = await checkInvariants(h, {
      scenario: "connection dropped, window full",
      ids,
      finalWithinMs: 60_000,
      // Exactly the segments the SMSC took whose answers the drops swallowed, each counted unknown.
      allowedResends: takenOnDrop,
      resendsCountedAsUnknown: true,
    });
    expect(takenOnDrop(), "no submit on the wire was taken at a drop").toBeGreaterThan(0);
    expect(report.resends).toBe(takenOnDrop());
    const parts = econet.accepted.filter((a) => ours.has(a.destination_addr) && a.concat !== null);
    expect(parts.length, "no two-segment message reached the SMSC").toBeGreaterThanOrEqual(200);
    console.info(
      `[faults] connection drop: ${takenOnDrop()} segments taken on the wire at the drops, ${report.resends} resent, ${report.counted.unknown} counted unknown`,
    );
  });
});
