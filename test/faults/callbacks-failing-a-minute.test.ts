import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  type Received,
  type Receiver,
  startReceiver,
} from "../integration/webhooks-receiver.ts";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (7, 14) Four callback receivers fail for a full minute each, at the same time (so the suite pays
 * for one minute, not four): one answers 401 (still on the old secret, say), one 404 (mid-deploy),
 * one 500, and one hangs past the delivery timeout (1 s here). Then each answers 200: every event
 * was retried through the minute, none dropped, and each is taken exactly once.
 */
const FAILING_MS = 60_000;
const FAILURES = [401, 404, 500, "hang"] as const;
type Failure = (typeof FAILURES)[number];
let h: FaultHarness;
beforeAll(async () => {
  h = await startFaultHarness({ env: { WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_RETRY_MAX_DELAY_MS: "2000" } });
});
afterAll(() => h?.stop());

interface FailingReceiver {
  failure: Failure;
  rx: Receiver;
  ids: string[];
  /** Requests answered with the failure, and events taken (answered 200) by id. */
  counts: { refused: number; taken: Map<string, number> };
}

describe("fault: callback receivers answering 401, 404, 500 or hanging for a minute", () => {
  it("delivers every event exactly once when each receiver recovers", async () => {
    let failing = true;
    const receivers: FailingReceiver[] = [];
    for (const failure of FAILURES) {
      const counts = { refused: 0, taken: new Map<string, number>() };
      const rx = await startReceiver((req: Received): Answer => {
        if (failing) {
          counts.refused++;
          return failure;
        }
        counts.taken.set(req.event.id, (counts.taken.get(req.event.id) ?? 0) + 1);
        return 200;
      });
      receivers.push({ failure, rx, ids: [], counts });
    }
    try {
      const started = Date.now();
      for (const [i, r] of receivers.entries())
        r.ids = await h.bulk(
          [
            ...numbers("econet", 4, 10 * i),
            ...numbers("netone", 4, 10 * i),
            ...numbers("telecel", 4, 10 * i),
          ],
          "callbacks",
          { webhook_url: r.rx.url },
        );
      await new Promise((resolve) => setTimeout(resolve, FAILING_MS - (Date.now() - started)));
      failing = false;
      const recovered = Date.now();
      for (const r of receivers) {
        // Still asked after most of the minute had passed: retried through it, not given up.
        const late = r.rx.received.filter((x) => x.at >= started + FAILING_MS - 10_000);
        expect(late.length, `${r.failure}: no attempt in the minute's last 10 s`).toBeGreaterThan(0);
      }
      const ids = receivers.flatMap((r) => r.ids);
      await checkInvariants(h, {
        scenario: "callbacks failing a minute",
        ids,
        finalWithinMs: 30_000,
        allowedResends: 0,
      });
      for (const r of receivers) {
        let events: { id: string; state: string }[] = [];
        await waitFor(
          async () => {
            ({ rows: events } = await h.sql.query<{ id: string; state: string }>(
              "SELECT id, state FROM webhook_events WHERE message_id = ANY($1)",
              [r.ids],
            ));
            // enqueued, success and delivered for each message.
            return events.length === r.ids.length * 3 && events.every((e) => e.state === "delivered");
          },
          { timeoutMs: 30_000, intervalMs: 200, what: `every event of the ${r.failure} receiver delivered` },
        );
        for (const e of events) expect(r.counts.taken.get(e.id), `${r.failure}: event ${e.id} taken`).toBe(1);
        expect(r.counts.taken.size).toBe(events.length);
      }
      console.info(
        `[faults] callbacks failing ${FAILING_MS / 1000} s: ${receivers
          .map((r) => `${r.failure} answered ${r.counts.refused} times`)
          .join(", ")} (hanging: at most ${receivers[3]?.rx.maxOpen()} at once); all delivered ${
          Date.now() - recovered
        } ms after recovery`,
      );
    } finally {
      for (const r of receivers) await r.rx.stop();
    }
  });
});
