import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATUS } from "../../src/smpp/command-status.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";

/**
 * The SRE probe's case: a carrier that takes at most 5 submits a second, and no TPS limit of
 * Shiri's own (window_size 50). Before the slow start (decision 0039) every throttling pause ended
 * with the whole window on the wire again, nearly all of it throttled: 605–615 ESME_RTHROTTLED
 * answers for 50 messages, in this test and in the probe. With it, 101–103: 45 from the first
 * burst (the window starts at window_size), then a few each second.
 */
let h: DispatchHarness;
beforeAll(async () => {
  h = await startDispatchHarness({ behaviour: { econet: { tpsLimit: 5 } } });
});
afterAll(async () => {
  await h?.stop();
});

describe("a burst against a carrier that throttles above 5 submits a second", () => {
  it("sends every message once, throttled a sixth as often as with the whole window after each pause", async () => {
    const to = Array.from({ length: 50 }, (_, i) => `+26377${String(4_000_000 + i)}`);
    const ids = await h.bulk(to, "slow start");
    // 50 at 5 a second take 10 s at the least.
    await h.waitUntilSettled(ids, { timeoutMs: 25_000 });
    const states = await h.statusOf(ids);
    for (const id of ids) expect(states.get(id)?.status).toBe("success");

    const sim = h.sims.get("econet");
    const accepted = new Map<string, number>();
    for (const a of sim.accepted)
      accepted.set(a.destination_addr, (accepted.get(a.destination_addr) ?? 0) + 1);
    expect(accepted.size).toBe(50);
    expect([...accepted.values()].every((times) => times === 1)).toBe(true);

    const throttled = sim.rejections.filter((r) => r.command_status === STATUS.ESME_RTHROTTLED).length;
    expect(throttled).toBeLessThanOrEqual(200);
  }, 40_000);
});
