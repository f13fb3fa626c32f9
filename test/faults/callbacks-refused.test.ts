import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Received, startReceiver } from "../integration/webhooks-receiver.ts";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (7) The callback receiver answers 500, then 404 (mid-deploy), for a while, then 200: every
 * event is retried until taken, and each is taken exactly once in the end.
 */
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness();
});
afterAll(() => h?.stop());

describe("fault: callback receiver failing for a while", () => {
  it("delivers every event exactly once in the end", async () => {
    let mode: 500 | 404 | 200 = 500;
    const taken = new Map<string, number>();
    const rx = await startReceiver((r: Received) => {
      if (mode === 200) taken.set(r.event.id, (taken.get(r.event.id) ?? 0) + 1);
      return mode;
    });
    try {
      const ids = await h.bulk(
        [...numbers("econet", 10, 0), ...numbers("netone", 10, 0), ...numbers("telecel", 10, 0)],
        "callbacks",
        { webhook_url: rx.url },
      );
      await waitFor(() => rx.received.length >= 60, { timeoutMs: 30_000, what: "60 refused callbacks" });
      mode = 404;
      const refused = rx.received.length;
      await waitFor(() => rx.received.length >= refused + 60, { timeoutMs: 30_000, what: "60 more (404)" });
      mode = 200;
      await checkInvariants(h, {
        scenario: "callbacks refused",
        ids,
        finalWithinMs: 30_000,
        allowedResends: 0,
      });
      let events: { id: string; state: string }[] = [];
      await waitFor(
        async () => {
          ({ rows: events } = await h.sql.query<{ id: string; state: string }>(
            "SELECT id, state FROM webhook_events WHERE message_id = ANY($1)",
            [ids],
          ));
          // enqueued, success and delivered for each message.
          return events.length === ids.length * 3 && events.every((e) => e.state === "delivered");
        },
        { timeoutMs: 60_000, intervalMs: 200, what: "every event delivered" },
      );
      for (const e of events) expect(taken.get(e.id), `event ${e.id} taken`).toBe(1);
      expect(taken.size).toBe(events.length);
      console.info(
        `[faults] callbacks refused: ${refused} answered 500, ${rx.received.length} requests in all`,
      );
    } finally {
      await rx.stop();
    }
  });
});
