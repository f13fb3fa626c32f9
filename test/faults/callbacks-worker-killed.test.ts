import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, type Receiver, startReceiver } from "../integration/webhooks-receiver.ts";
import { waitFor } from "../support/wait-for.ts";
import { type FaultHarness, numbers, startFaultHarness } from "./support/harness.ts";
import { checkInvariants } from "./support/invariants.ts";

/**
 * (2, callbacks) The worker SIGKILLed while its callback jobs fill their host's slots (a receiver
 * that holds every request open): the dead worker's jobs stay active in pg-boss until their
 * heartbeat runs out, and until then the host's slots stay taken, in every worker. Within seconds
 * of the heartbeat (10 s) and supervision (5 s), not the jobs' expiry (3 min), a new worker calls
 * back both the events the dead one held and those of messages sent after its death.
 */
const SLOTS = 2;
let h: FaultHarness;
let rx: Receiver;
let holding = true;
beforeAll(async () => {
  h = await startFaultHarness({
    env: { WEBHOOK_CONCURRENCY_PER_HOST: String(SLOTS), WEBHOOK_TIMEOUT_MS: "60000" },
  });
  rx = await startReceiver((): Answer => (holding ? "hang" : 200));
});
afterAll(async () => {
  await rx?.stop();
  await h?.stop();
});

describe("fault: worker killed with its callbacks in flight", () => {
  it("frees the receiver's slots within seconds and calls back every event once after", async () => {
    const before = await h.bulk(numbers("econet", 4, 0), "held", { webhook_url: rx.url });
    await waitFor(async () => rx.maxOpen() >= SLOTS, {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: "the receiver's slots all taken",
    });
    await h.kill(h.worker);
    holding = false;
    await h.startWorker();
    const restarted = Date.now();
    const after = await h.bulk(numbers("econet", 4, 10), "after", { webhook_url: rx.url });
    const ids = [...before, ...after];
    const delivered = async () =>
      (
        await h.sql.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook_events WHERE message_id = ANY($1) AND state = 'delivered'",
          [ids],
        )
      ).rows[0]?.n ?? 0;
    // enqueued, success and delivered for each message. The jobs' expiry alone took three minutes.
    await waitFor(async () => (await delivered()) === ids.length * 3, {
      timeoutMs: 45_000,
      intervalMs: 200,
      what: "every event called back after the restart",
    });
    const tookMs = Date.now() - restarted;
    // Each event answered 200 exactly once: only the requests held open at the kill came twice.
    const answered = new Map<string, number>();
    for (const r of rx.received.filter((x) => x.at >= restarted))
      answered.set(r.event.id, (answered.get(r.event.id) ?? 0) + 1);
    expect([...answered.values()].every((n) => n === 1)).toBe(true);
    expect(answered.size).toBeGreaterThanOrEqual(after.length * 3);
    await checkInvariants(h, {
      scenario: "worker killed with its callbacks in flight",
      ids,
      finalWithinMs: 30_000,
      allowedResends: 0,
    });
    console.info(
      `[faults] callbacks of a killed worker: every event called back ${tookMs} ms after the restart`,
    );
  });
});
