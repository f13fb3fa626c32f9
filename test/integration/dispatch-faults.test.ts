import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operator } from "../../carriers/index.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { waitFor } from "../support/wait-for.ts";

let h: DispatchHarness;

beforeAll(async () => {
  h = await startDispatchHarness({ env: { SMPP_NETONE_TPS_LIMIT: "20" } });
});
afterAll(() => h.stop());

const numbers = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `+263${prefix}${String(1_000_000 + i)}`);
/** How many times the carrier accepted each text: a message accepted twice is a duplicate. */
const acceptCounts = (operator: Operator, texts: readonly string[]) => {
  const wanted = new Set(texts);
  const counts = new Map<string, number>();
  for (const a of h.sims.get(operator).accepted)
    if (wanted.has(a.text)) counts.set(a.text, (counts.get(a.text) ?? 0) + 1);
  return counts;
};
const unique = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag} #${i}`);

describe("carrier faults", () => {
  it("backs off when throttled (ESME_RTHROTTLED) and delivers everything exactly once", async () => {
    h.sims.get("telecel").setBehaviour({ tpsLimit: 10 });
    try {
      const texts = unique("throttled", 40);
      const ids = await Promise.all(texts.map((text, i) => h.send(`+26373${String(2_000_000 + i)}`, text)));
      await h.waitUntilSettled(ids, { timeoutMs: 30_000 });
      const states = await h.statusOf(ids);
      for (const id of ids) expect(states.get(id)?.status).toBe("success");
      expect(h.sims.get("telecel").rejections.some((r) => r.command_status === 0x58)).toBe(true);
      const counts = acceptCounts("telecel", texts);
      expect([...counts.values()].every((c) => c === 1)).toBe(true);
      expect(counts.size).toBe(40);
    } finally {
      h.sims.get("telecel").setBehaviour({ tpsLimit: 0 });
    }
  });

  it("never exceeds a configured TPS limit: the carrier at that limit never throttles", async () => {
    h.sims.get("netone").setBehaviour({ tpsLimit: 20 });
    try {
      const rejectionsBefore = h.sims.get("netone").rejections.length;
      const ids = await h.bulk(numbers("71", 60), "tps limited");
      await h.waitUntilSettled(ids, { timeoutMs: 30_000 });
      expect(h.sims.get("netone").rejections.length).toBe(rejectionsBefore);
      const times = h.sims
        .get("netone")
        .accepted.filter((a) => a.text === "tps limited")
        .map((a) => a.at.getTime())
        .sort((a, b) => a - b);
      expect(times).toHaveLength(60);
      // No sliding second holds more than the limit.
      for (let i = 20; i < times.length; i++)
        expect((times[i] as number) - (times[i - 20] as number)).toBeGreaterThanOrEqual(990);
    } finally {
      h.sims.get("netone").setBehaviour({ tpsLimit: 0 });
    }
  });

  it("reconnects after connections dropped mid-batch and loses nothing", async () => {
    h.sims.get("econet").setBehaviour({ dropAfterSubmits: 15 });
    const connectionsBefore = h.sims.get("econet").stats.connections;
    try {
      const texts = unique("dropped", 50);
      const ids = await Promise.all(texts.map((text, i) => h.send(`+26377${String(3_000_000 + i)}`, text)));
      // Each drop costs a reconnect and the retry delay of what was on the wire, which doubles each
      // time a message is lost again (1, 2, 4 … s, jittered): 14-28 s alone; a message lost five
      // times waits 31-63 s, which a loaded CI machine has seen. The test is about nothing lost and
      // nothing twice, not the time.
      await h.waitUntilSettled(ids, { timeoutMs: 100_000 });
      const states = await h.statusOf(ids);
      for (const id of ids) expect(states.get(id)?.status).toBe("success");
      expect(h.sims.get("econet").stats.connections).toBeGreaterThan(connectionsBefore + 1);
      // A submit lost with its connection was never accepted, so nothing was accepted twice.
      const counts = acceptCounts("econet", texts);
      expect(counts.size).toBe(50);
      expect([...counts.values()].every((c) => c === 1)).toBe(true);
    } finally {
      h.sims.get("econet").setBehaviour({ dropAfterSubmits: null });
    }
  }, 110_000);

  it("applies duplicate receipts once and receipts that overtake their submit_sm_resp", async () => {
    h.sims
      .get("econet")
      .setBehaviour({ duplicateReceiptRate: 1, receiptBeforeResponseRate: 1, submitLatencyMs: 30 });
    try {
      const ids = await h.bulk(numbers("77", 30), "early and twice");
      // The test before drops econet's connections: its breaker may still be open for a while.
      await h.waitUntilSettled(ids, { delivered: true, timeoutMs: 45_000 });
      const states = await h.statusOf(ids);
      for (const id of ids)
        expect(states.get(id)).toMatchObject({
          status: "success",
          delivered: true,
          operator_response: "DELIVRD",
        });
      const sent = h.sims.get("econet").receiptsSent.filter((r) => r.stat === "DELIVRD");
      expect(sent.length).toBeGreaterThanOrEqual(60);
      const early = await h.pool.query("SELECT count(*)::int AS n FROM early_receipts");
      await waitFor(
        async () => (await h.pool.query("SELECT count(*)::int AS n FROM early_receipts")).rows[0]?.n === 0,
        {
          what: "early receipts to be matched",
        },
      );
      expect(early.rows).toHaveLength(1);
    } finally {
      h.sims
        .get("econet")
        .setBehaviour({ duplicateReceiptRate: 0, receiptBeforeResponseRate: 0, submitLatencyMs: 0 });
    }
  }, 60_000);

  it("opens the breaker on a failing carrier, holds its messages while others flow, and closes again", async () => {
    const link = h.t.service.dispatch?.workers.econet?.link;
    if (!link) throw new Error("econet link not up");
    const transitions: string[] = [];
    link.breaker.on("open", () => transitions.push("open"));
    link.breaker.on("close", () => transitions.push("close"));
    h.sims.get("econet").setBehaviour({ rejectRate: 1, rejectStatus: 0x08 }); // ESME_RSYSERR: retryable
    const econet = await h.bulk(
      numbers("77", 20).map((n) => n.replace("771", "772")),
      "breaker econet",
    );
    await waitFor(() => transitions.includes("open"), { timeoutMs: 10_000, what: "the breaker to open" });

    const others = await h.bulk(
      [...numbers("71", 5), ...numbers("73", 5)].map((n) => n.replace(/(\d{5})$/, "9$1").slice(0, 13)),
      "breaker others",
    );
    await h.waitUntilSettled(others, { timeoutMs: 10_000 });
    const waiting = await h.statusOf(econet);
    for (const id of econet) expect(["enqueued", "processing"]).toContain(waiting.get(id)?.status);

    h.sims.get("econet").setBehaviour({ rejectRate: 0 });
    await h.waitUntilSettled(econet, { timeoutMs: 30_000 });
    const done = await h.statusOf(econet);
    for (const id of econet) expect(done.get(id)?.status).toBe("success");
    expect(transitions).toContain("close");
  });
});
