import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { expectLedgerBalanced } from "../support/ledger.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * A submit_sm_resp that comes after the response timeout proves the carrier took the segment:
 * it is recorded, and the message is not sent again. Only an answer that never comes within the
 * late-answer window (3 × the response timeout) leaves the segment to be sent again.
 */
const TIMEOUT_MS = 300;
let h: DispatchHarness;
beforeAll(async () => {
  h = await startDispatchHarness({ env: { SMPP_ECONET_RESPONSE_TIMEOUT_MS: String(TIMEOUT_MS) } });
});
afterAll(async () => {
  await h?.stop();
});

const numbers = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => `+26377${String(4_000_000 + from + i)}`);

const submitsTo = (destinations: readonly string[]) => {
  const wanted = new Set(destinations.map((d) => d.slice(1)));
  const counts = new Map<string, number>();
  for (const a of h.sims.get("econet").accepted)
    if (wanted.has(a.destination_addr))
      counts.set(a.destination_addr, (counts.get(a.destination_addr) ?? 0) + 1);
  return counts;
};

async function throttled(): Promise<number> {
  const metric = await h.t.service.metrics.throttled.get();
  return metric.values.find((v) => v.labels.operator === "econet")?.value ?? 0;
}

async function lateAnswers(outcome: string): Promise<number> {
  const metric = await h.t.service.metrics.lateAnswers.get();
  return (
    metric.values.find((v) => v.labels.operator === "econet" && v.labels.outcome === outcome)?.value ?? 0
  );
}

describe("late answers", () => {
  it("records an answer that comes after the timeout and never sends the segment again", async () => {
    const before = await lateAnswers("recorded");
    // Every answer 300 ms past the timeout, well inside the late-answer window.
    h.sims.get("econet").setBehaviour({ submitLatencyMs: TIMEOUT_MS * 2 });
    try {
      const to = numbers(10, 0);
      const ids = await h.bulk(to, "answered late");
      await h.waitUntilSettled(ids, { delivered: true, timeoutMs: 20_000 });
      const states = await h.statusOf(ids);
      for (const id of ids) expect(states.get(id)).toMatchObject({ status: "success", delivered: true });
      const counts = submitsTo(to);
      expect(counts.size).toBe(10);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
      expect((await lateAnswers("recorded")) - before).toBe(10);
      await expectLedgerBalanced(h.pool, h.acct.id);
    } finally {
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0 });
    }
  });

  it("sends a segment again only when no answer came within the window, and bills it once", async () => {
    // Answers 1.5 s late: past the 900 ms window, so the carrier's acceptance is never heard.
    h.sims.get("econet").setBehaviour({ submitLatencyMs: 1_500 });
    const to = numbers(1, 100);
    try {
      const id = await h.send(to[0] as string, "answered too late");
      await waitFor(async () => (submitsTo(to).get((to[0] as string).slice(1)) ?? 0) >= 1, {
        what: "the first submit",
      });
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0 });
      await h.waitUntilSettled([id], { delivered: true, timeoutMs: 20_000 });
      expect((await h.statusOf([id])).get(id)).toMatchObject({ status: "success", delivered: true });
      // The documented in-flight window: the carrier saw it twice; the sender was billed once.
      expect(submitsTo(to).get((to[0] as string).slice(1))).toBe(2);
      const { rows } = await h.pool.query<{ billing: string }>("SELECT billing FROM messages WHERE id = $1", [
        id,
      ]);
      expect(rows[0]?.billing).toBe("captured");
      // A second capture would leave the ledger holding less than the account's messages do.
      await expectLedgerBalanced(h.pool, h.acct.id);
    } finally {
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0 });
    }
  });

  it("a carrier that never answers a message gets it twice at most, then it fails NO_ANSWER, released", async () => {
    // Every answer past the window: each try may have reached the handset, none is ever heard.
    h.sims.get("econet").setBehaviour({ submitLatencyMs: 2_000 });
    const to = numbers(1, 200);
    try {
      const id = await h.send(to[0] as string, "never answered");
      await h.waitUntilSettled([id], { timeoutMs: 20_000 });
      expect((await h.statusOf([id])).get(id)).toMatchObject({
        status: "failed",
        operator_response: "NO_ANSWER",
      });
      // Before, it went again after each back-off until its validity ended (24 h by default).
      expect(submitsTo(to).get((to[0] as string).slice(1))).toBe(2);
      const { rows } = await h.pool.query<{ billing: string; unanswered: number }>(
        "SELECT billing, unanswered FROM messages WHERE id = $1",
        [id],
      );
      expect(rows[0]).toEqual({ billing: "released", unanswered: 2 });
      await expectLedgerBalanced(h.pool, h.acct.id);
    } finally {
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0 });
    }
  });

  it("a message whose validity ends while its late answer is on the way is a success, billed", async () => {
    h.sims.get("econet").setBehaviour({ submitLatencyMs: TIMEOUT_MS * 2 });
    const to = numbers(1, 400);
    try {
      const id = await h.send(to[0] as string, "answered late, past its validity");
      await waitFor(async () => h.sims.get("econet").onTheWire > 0, { what: "the submit at the carrier" });
      // Its validity ends while the submit is on the wire, before its timeout and its late answer.
      await h.pool.query("UPDATE messages SET expires_at = now() - interval '1 second' WHERE id = $1", [id]);
      await h.waitUntilSettled([id], { timeoutMs: 20_000 });
      const { rows } = await h.pool.query<{ status: string; billing: string }>(
        "SELECT status, billing FROM messages WHERE id = $1",
        [id],
      );
      // Before, the sweep or the retry's claim expired it and gave its hold back: the handset had it.
      expect(rows[0]).toEqual({ status: "success", billing: "captured" });
      expect(submitsTo(to).get((to[0] as string).slice(1))).toBe(1);
      await expectLedgerBalanced(h.pool, h.acct.id);
    } finally {
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0 });
    }
  });

  it("a number that opts out while its submit waits for a late answer is billed once the carrier took it", async () => {
    h.sims.get("econet").setBehaviour({ submitLatencyMs: TIMEOUT_MS * 2 });
    const to = numbers(1, 500);
    try {
      const id = await h.send(to[0] as string, "answered late, opted out meanwhile");
      await waitFor(async () => h.sims.get("econet").onTheWire > 0, { what: "the submit at the carrier" });
      const res = await call(h.t.base, "POST", "/api/v1/opt-outs", {
        headers: h.acct.headers,
        body: { number: to[0] },
      });
      expect(res.status).toBe(201);
      await h.waitUntilSettled([id], { timeoutMs: 20_000 });
      const { rows } = await h.pool.query<{ status: string; billing: string; parts: number }>(
        `SELECT status, billing, (SELECT count(*)::int FROM message_parts p WHERE p.message_id = m.id) AS parts
           FROM messages m WHERE id = $1`,
        [id],
      );
      // Before, the settle failed it OPTED_OUT and gave its hold back, then the late ESME_ROK was
      // recorded: the handset had it, the sender paid nothing.
      expect(rows[0]).toEqual({ status: "success", billing: "captured", parts: 1 });
      expect(submitsTo(to).get((to[0] as string).slice(1))).toBe(1);
      await expectLedgerBalanced(h.pool, h.acct.id);
    } finally {
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0 });
    }
  });

  // Last: the throttle cuts the session's window, which later tests would start with.
  it("counts a throttling answer that comes late in shiri_smpp_throttled_total", async () => {
    const to = numbers(1, 300);
    const destination = (to[0] as string).slice(1);
    const throttledBefore = await throttled();
    const refusedBefore = await lateAnswers("refused");
    h.sims.get("econet").setBehaviour({
      submitLatencyMs: TIMEOUT_MS * 2,
      rejectDestinations: [destination],
      rejectStatus: 0x58, // ESME_RTHROTTLED
    });
    try {
      const id = await h.send(to[0] as string, "throttled late");
      await waitFor(async () => (await lateAnswers("refused")) > refusedBefore, {
        what: "the late throttle",
      });
      expect((await throttled()) - throttledBefore).toBe(1);
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0, rejectDestinations: [] });
      await h.waitUntilSettled([id], { timeoutMs: 20_000 });
      expect((await h.statusOf([id])).get(id)).toMatchObject({ status: "success" });
    } finally {
      h.sims.get("econet").setBehaviour({ submitLatencyMs: 0, rejectDestinations: [], rejectStatus: 0x0b });
    }
  });
});
