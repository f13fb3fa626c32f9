import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AWAKE_AFTER_WORK_MS } from "../../src/queue/wakeups.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";
import { type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * An idle worker sleeps until work is announced (docs/decisions/0011-idle-worker.md): with the
 * fallback poll a minute long, a message sent after a quiet spell still reaches the carrier in
 * seconds, a scheduled one at its send_at, and so does one sent after the listening connection
 * was cut (it reconnects and looks once); a callback's retry goes out when it comes due, and a
 * redelivery when it is asked for.
 */
const IDLE_POLL_MS = 60_000;
/** Far below the fallback poll: only an announcement (or the watch's timer) gets a message there this soon. */
const PROMPTLY_MS = 5_000;

/** A callback retry's first back-off (1 to 2 s): past the loops' awake spell, far below the fallback poll. */
const RETRY_BASE_MS = 2_000;

let h: DispatchHarness;
let rx: Receiver;
let numbers = 0;
const econetNumber = () => `+26377${String(6_000_000 + numbers++)}`;
const submitted = (text: string) => h.sims.get("econet").accepted.some((a) => a.text === text);
const quietSpell = () => new Promise((resolve) => setTimeout(resolve, AWAKE_AFTER_WORK_MS + 1_000));

beforeAll(async () => {
  // The first attempt at each callback fails, the next is answered.
  rx = await startReceiver((_, attempt) => (attempt === 1 ? 503 : 200));
  h = await startDispatchHarness({
    env: { IDLE_POLL_MS: String(IDLE_POLL_MS), WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS) },
  });
  await waitFor(() => h.sims.get("econet").boundSessions > 0, { timeoutMs: 10_000, what: "the econet bind" });
});
afterAll(async () => {
  await h?.stop();
  await rx?.stop();
});

describe("an idle worker", () => {
  it("submits a message sent after a quiet spell without waiting for the fallback poll", async () => {
    await quietSpell();
    const text = `idle wake ${Date.now()}`;
    await h.send(econetNumber(), text);
    await waitFor(() => submitted(text), { timeoutMs: PROMPTLY_MS, what: "the message at the carrier" });
    // And the next one, after another quiet spell.
    await quietSpell();
    const again = `idle wake again ${Date.now()}`;
    await h.send(econetNumber(), again);
    await waitFor(() => submitted(again), {
      timeoutMs: PROMPTLY_MS,
      what: "the second message at the carrier",
    });
  });

  it("submits a scheduled message at its send_at, not a poll later", async () => {
    await quietSpell();
    const text = `idle scheduled ${Date.now()}`;
    const sendAt = new Date(Date.now() + 2_000);
    const res = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      body: { to: econetNumber(), from: "SHIRI", message: text, send_at: sendAt.toISOString() },
    });
    expect(res.status).toBe(202);
    await waitFor(() => submitted(text), { timeoutMs: 2_000 + PROMPTLY_MS, what: "the scheduled message" });
    expect(Date.now()).toBeGreaterThanOrEqual(sendAt.getTime());
  });

  it("listens again after its connection is cut, and finds what was sent meanwhile", async () => {
    await quietSpell();
    const { rows } = await h.pool.query<{ ended: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'shiri-listener'`,
    );
    expect(rows.map((r) => r.ended)).toEqual([true]);
    // Sent while nobody listens: the reconnect's one look finds it.
    const text = `idle reconnect ${Date.now()}`;
    await h.send(econetNumber(), text);
    await waitFor(() => submitted(text), { timeoutMs: PROMPTLY_MS, what: "the message sent while cut off" });
    await waitFor(
      async () => {
        const listening = await h.pool.query(
          `SELECT 1 FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'shiri-listener' AND query ILIKE 'LISTEN%'`,
        );
        return listening.rowCount === 1;
      },
      { timeoutMs: PROMPTLY_MS, what: "the listener back" },
    );
    await quietSpell();
    const after = `idle after reconnect ${Date.now()}`;
    await h.send(econetNumber(), after);
    await waitFor(() => submitted(after), {
      timeoutMs: PROMPTLY_MS,
      what: "the message after the reconnect",
    });
  });

  it("sends a callback's retry when it comes due, not at the next poll", async () => {
    await quietSpell();
    const res = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      body: { to: econetNumber(), from: "SHIRI", message: `idle retry ${Date.now()}`, webhook_url: rx.url },
    });
    expect(res.status).toBe(202);
    const id = (res.body as { id: string }).id;
    // Each of its callbacks (enqueued, success, delivered) fails once, each retry due 1 to 2 s after
    // its failure: the retries come due one after another, and every one goes out on time.
    const attemptsByEvent = () => {
      const counts = new Map<string, number>();
      for (const r of rx.forMessage(id)) counts.set(r.event.id, (counts.get(r.event.id) ?? 0) + 1);
      return [...counts.values()];
    };
    await waitFor(() => attemptsByEvent().length === 3 && attemptsByEvent().every((n) => n >= 2), {
      timeoutMs: PROMPTLY_MS,
      what: "every callback's retry",
    });
  });

  it("redelivers a callback on request at once, not at the next poll", async () => {
    const res = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      body: {
        to: econetNumber(),
        from: "SHIRI",
        message: `idle redeliver ${Date.now()}`,
        webhook_url: rx.url,
      },
    });
    expect(res.status).toBe(202);
    const id = (res.body as { id: string }).id;
    const settled = async () => {
      const { rows } = await h.pool.query<{ id: string }>(
        "SELECT id FROM webhook_events WHERE message_id = $1 AND state = 'delivered' ORDER BY created_at",
        [id],
      );
      return rows;
    };
    await waitFor(async () => (await settled()).length === 3, {
      timeoutMs: 3 * PROMPTLY_MS,
      what: "the callbacks",
    });
    const [first] = await settled();
    const eventId = first?.id ?? "";
    const before = rx.received.filter((r) => r.event.id === eventId).length;
    await quietSpell();
    const again = await call(h.t.base, "POST", `/api/v1/webhook/deliveries/${eventId}/redeliver`, {
      headers: h.acct.headers,
    });
    expect(again.status).toBe(202);
    await waitFor(() => rx.received.filter((r) => r.event.id === eventId).length > before, {
      timeoutMs: PROMPTLY_MS,
      what: "the redelivered callback",
    });
  });
});
