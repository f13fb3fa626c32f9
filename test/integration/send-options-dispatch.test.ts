import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Issue 30's send options all the way to a carrier, over loopback SMPP with the simulators: the
 * text smart encoding sends, the validity period the SMSC is given, a validity shorter than an SMSC
 * that never answers (Telecel's here: it holds every submit ten minutes), and a delivery window that
 * opens during the test. The two that wait for the clock (a minute each at most) start first and
 * are checked last, so they wait together.
 */
let h: DispatchHarness;
const send = (path: string, body: unknown) => call(h.t.base, "POST", path, { headers: h.acct.headers, body });
const available = async () => (await balanceNow(h.pool, h.acct.id))?.available ?? -1;

let neverAnswered: { id: string; acceptedAt: number; heldBefore: number };
let windowed: { id: string; opening: Date };

/** HH:MM in Harare (UTC+2, no daylight saving) of an instant. */
const harare = (at: Date) => new Date(at.getTime() + 2 * 3_600_000).toISOString().slice(11, 16);

beforeAll(async () => {
  h = await startDispatchHarness({
    behaviour: { telecel: { submitLatencyMs: 600_000 } },
    // Its validity must end first: tried twice unanswered, it would fail NO_ANSWER (late-answers.test.ts).
    env: { DISPATCH_MAX_UNANSWERED_SENDS: "100" },
  });

  // A one-minute validity to an SMSC that never answers.
  const heldBefore = await available();
  const res = await send("/api/v1/sms", {
    to: "+263731234567",
    from: "SHIRI",
    message: "never answered",
    validity_period: 60,
  });
  expect(res.status).toBe(202);
  neverAnswered = { id: (res.body as { id: string }).id, acceptedAt: Date.now(), heldBefore };

  // A window opening at the next whole minute (the one after, when that is a few seconds away).
  const now = Date.now();
  let opening = Math.ceil((now + 1) / 60_000) * 60_000;
  if (opening - now < 5_000) opening += 60_000;
  const start = new Date(opening);
  const window = {
    start: harare(start),
    end: harare(new Date(opening + 10 * 60_000)),
    time_zone: "Africa/Harare",
  };
  const w = await send("/api/v1/sms", {
    to: "+263771230001",
    from: "SHIRI",
    message: "at the opening",
    deliver_between: window,
  });
  expect(w.status).toBe(202);
  expect(w.body).toMatchObject({ status: "enqueued", send_at: start.toISOString(), deliver_between: window });
  windowed = { id: (w.body as { id: string }).id, opening: start };
}, 120_000);
afterAll(() => h?.stop());

const submitsOf = (text: string) => h.sims.get("econet").accepted.filter((a) => a.text === text);

describe("send options at the carrier", () => {
  it("the SMSC is given what is left of the message's validity_period", async () => {
    const res = await send("/api/v1/sms", {
      to: "+263771230002",
      from: "SHIRI",
      message: "ten minutes",
      validity_period: 600,
    });
    const m = res.body as { id: string; expires_at: string };
    await h.waitUntilSettled([m.id]);
    const [submit] = submitsOf("ten minutes");
    // SMPP's relative time has whole seconds: within a couple of the expiry.
    expect(Math.abs((submit?.validUntil?.getTime() ?? 0) - Date.parse(m.expires_at))).toBeLessThan(3_000);
    // Without one, the configured validity (24 h) as before.
    const plain = await h.send("+263771230003", "a day");
    await h.waitUntilSettled([plain]);
    const day = submitsOf("a day")[0]?.validUntil?.getTime() ?? 0;
    expect(Math.abs(day - (Date.now() + 24 * 3_600_000))).toBeLessThan(60_000);
  });

  it("the carrier gets the text smart encoding sent, in GSM-7", async () => {
    const res = await send("/api/v1/sms", {
      to: "+263771230004",
      from: "SHIRI",
      message: "\u201CSmart\u201D \u2013 it\u2019s cheaper\u2026",
      smart_encoding: true,
    });
    await h.waitUntilSettled([(res.body as { id: string }).id]);
    const [submit] = submitsOf(`"Smart" - it's cheaper...`);
    expect(submit?.data_coding).toBe(0);
  });

  it("a delivery window that opens during the test: nothing reaches the carrier before it, then the message goes", async () => {
    await h.waitUntilSettled([windowed.id], { timeoutMs: 80_000 });
    const [submit, ...again] = submitsOf("at the opening");
    expect(again).toHaveLength(0);
    const late = (submit?.at.getTime() ?? 0) - windowed.opening.getTime();
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(5_000);
    expect((await h.statusOf([windowed.id])).get(windowed.id)?.status).toBe("success");
  }, 100_000);

  it("a validity shorter than an SMSC that never answers: failed EXPIRED once it passes, the hold released", async () => {
    await waitFor(
      async () => (await h.statusOf([neverAnswered.id])).get(neverAnswered.id)?.status === "failed",
      {
        timeoutMs: 100_000,
        intervalMs: 200,
        what: "the unanswered message to expire",
      },
    );
    const ended = Date.now();
    expect((await h.statusOf([neverAnswered.id])).get(neverAnswered.id)).toMatchObject({
      status: "failed",
      operator_response: "EXPIRED",
    });
    // Not before its minute was up.
    expect(ended - neverAnswered.acceptedAt).toBeGreaterThanOrEqual(59_000);
    const { rows } = await h.pool.query<{ billing: string; kinds: string[] }>(
      `SELECT m.billing, ARRAY(SELECT kind FROM ledger_entries l WHERE l.message_id = m.id ORDER BY l.id) AS kinds
           FROM messages m WHERE m.id = $1`,
      [neverAnswered.id],
    );
    expect(rows[0]).toEqual({ billing: "released", kinds: ["hold", "release"] });
    const { rows: events } = await h.pool.query<{ type: string }>(
      "SELECT type FROM webhook_events WHERE message_id = $1 ORDER BY created_at",
      [neverAnswered.id],
    );
    expect(events.map((e) => e.type)).not.toContain("message.success");
  }, 120_000);
});
