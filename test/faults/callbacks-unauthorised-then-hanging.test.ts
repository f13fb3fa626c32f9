import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, type Received, startReceiver } from "../integration/webhooks-receiver.ts";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (14) The callback receiver answers 401 (still on the old secret, say) for 25 s, then hangs
 * past the delivery timeout (1 s here) for 30 s, then answers 200: every event is retried through
 * both, none is dropped, and each is taken exactly once when the receiver recovers.
 */
const UNAUTHORISED_MS = 25_000;
const HANGING_MS = 30_000;
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({ env: { WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_RETRY_MAX_DELAY_MS: "2000" } });
});
afterAll(() => h?.stop());

describe("fault: callback receiver unauthorised, then hanging", () => {
  it("delivers every event exactly once when the receiver recovers", async () => {
    let mode: 401 | "hang" | 200 = 401;
    const seen = { 401: 0, hang: 0 };
    const taken = new Map<string, number>();
    const rx = await startReceiver((r: Received): Answer => {
      if (mode === 200) taken.set(r.event.id, (taken.get(r.event.id) ?? 0) + 1);
      else seen[mode]++;
      return mode;
    });
    try {
      const ids = await h.bulk(
        [...numbers("econet", 10, 0), ...numbers("netone", 10, 0), ...numbers("telecel", 10, 0)],
        "callbacks",
        { webhook_url: rx.url },
      );
      await new Promise((r) => setTimeout(r, UNAUTHORISED_MS));
      mode = "hang";
      await new Promise((r) => setTimeout(r, HANGING_MS));
      const recovered = Date.now();
      mode = 200;
      expect(seen[401], "no callback answered 401").toBeGreaterThan(0);
      expect(seen.hang, "no callback left hanging").toBeGreaterThan(0);
      await checkInvariants(h, {
        scenario: "callbacks 401 then hanging",
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
        { timeoutMs: 30_000, intervalMs: 200, what: "every event delivered" },
      );
      for (const e of events) expect(taken.get(e.id), `event ${e.id} taken`).toBe(1);
      expect(taken.size).toBe(events.length);
      console.info(
        `[faults] callbacks 401 then hanging: ${seen[401]} answered 401, ${seen.hang} left hanging (max ${rx.maxOpen()} at once), all ${events.length} delivered ${Date.now() - recovered} ms after recovery`,
      );
    } finally {
      await rx.stop();
    }
  });
});
