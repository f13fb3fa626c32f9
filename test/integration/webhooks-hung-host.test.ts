import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call, type TestAccount } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";
import { type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * One account's receiver hangs; another account's callbacks must not queue behind it. The worker
 * has 4 callback slots and a host may take all 4 (WEBHOOK_CONCURRENCY_PER_HOST = the worker's
 * WEBHOOK_MAX_IN_FLIGHT): the same as four hanging hosts against the defaults (64 of 256 each).
 * Each event is its own job (WEBHOOK_BATCH_SIZE 1), so account A's burst is many rounds of 4
 * requests, each held for the whole timeout.
 */
const SLOTS = 4;
const TIMEOUT_MS = 2_000;
let h: DispatchHarness;
let b: TestAccount;
let hung: Receiver;
/** Whether the hung receiver hangs; it recovers in the second test. */
let hanging = true;
let fine: Receiver;

beforeAll(async () => {
  h = await startDispatchHarness({
    env: {
      WEBHOOK_POLL_MS: "20",
      WEBHOOK_MAX_IN_FLIGHT: String(SLOTS),
      WEBHOOK_CONCURRENCY_PER_HOST: String(SLOTS),
      WEBHOOK_BATCH_SIZE: "1",
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      // A's failed events are not retried within the test: only its first attempts compete.
      WEBHOOK_RETRY_BASE_MS: "600000",
    },
  });
  b = await h.t.account({ balance: 1_000_000_000 });
  hung = await startReceiver(() => (hanging ? "hang" : 200));
  fine = await startReceiver();
  for (const [acct, rx] of [
    [h.acct, hung],
    [b, fine],
  ] as const) {
    const put = await call(h.t.base, "PUT", "/api/v1/webhook", {
      headers: acct.headers,
      body: { url: rx.url },
    });
    expect(put.status).toBe(200);
  }
});
afterAll(async () => {
  await hung?.stop();
  await fine?.stop();
  await h?.stop();
});

const phone = (prefix: string, i: number) => `+263${prefix}${String(1_000_000 + i).slice(1)}`;

describe("a hanging receiver and another account's callbacks", () => {
  it("the other account's callbacks arrive within about one timeout, not behind every hanging batch", async () => {
    // A's burst: 12 messages, 3 events each (enqueued, accepted, delivered), 36 jobs to the hung host.
    const burst = await call(h.t.base, "POST", "/api/v1/sms/bulk", {
      headers: h.acct.headers,
      body: {
        to: Array.from({ length: 12 }, (_, i) => phone("771", i)),
        from: "SHIRI",
        message: "to a dead end",
      },
    });
    expect(burst.status).toBe(202);
    await waitFor(() => hung.open() === SLOTS, { what: "the hung receiver to hold every slot" });

    const sentAt = Date.now();
    const ids: string[] = [];
    for (const to of [phone("772", 1), phone("772", 2)]) {
      const res = await call(h.t.base, "POST", "/api/v1/sms", {
        headers: b.headers,
        body: { to, from: "SHIRI", message: "still flowing" },
      });
      expect(res.status).toBe(202);
      ids.push((res.body as { id: string }).id);
    }
    // Each of B's messages is enqueued, accepted and delivered: 3 callbacks each.
    const expected = ids.length * 3;
    await waitFor(() => fine.received.length >= expected, {
      timeoutMs: 20_000,
      intervalMs: 20,
      what: "the other account's callbacks",
    });
    const lastAt = Math.max(...fine.received.map((r) => r.at));
    const waited = lastAt - sentAt;
    console.log(`account B's callbacks: last one ${waited} ms after its sends`);
    // The slots A held when B sent free up within one timeout; B must not wait for A's later batches.
    expect(waited).toBeLessThan(TIMEOUT_MS + 2_000);
    // Each of B's events reached its receiver once.
    const seen = fine.received.map((r) => r.event.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(expected);

    // A's events are all still pending, none lost or failed, and none was sent to it twice: its
    // jobs wait in the queue while its probe runs.
    const { rows } = await h.pool.query<{ state: string; n: number }>(
      "SELECT state, count(*)::int AS n FROM webhook_events WHERE account_id = $1 GROUP BY state",
      [h.acct.id],
    );
    expect(rows.map((r) => r.state)).toEqual(["pending"]);
    const tried = hung.received.map((r) => r.event.id);
    expect(new Set(tried).size).toBe(tried.length);
    // Once its requests timed out, the hung host gets one at a time.
    await waitFor(() => hung.open() <= 1, {
      timeoutMs: 1_000,
      what: "one request at a time to the hung host",
    });
  });

  it("probes the hung host one job at a time, returns its queued jobs to the outbox, and resumes when it answers", async () => {
    const hungGroup = new URL(hung.url).host;
    const queuedJobsOfHost = async () => {
      const { rows } = await h.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pgboss.job
          WHERE name = 'webhook-delivery' AND group_id = $1 AND state IN ('created', 'retry')`,
        [hungGroup],
      );
      return rows[0]?.n ?? 0;
    };
    const sendA = async (first: number, n: number) => {
      const res = await call(h.t.base, "POST", "/api/v1/sms/bulk", {
        headers: h.acct.headers,
        body: {
          to: Array.from({ length: n }, (_, i) => phone("773", first + i)),
          from: "SHIRI",
          message: "more",
        },
      });
      expect(res.status).toBe(202);
      return (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    };

    // The burst's queued jobs went back to the outbox at the first timeouts, to wait out their
    // back-off (10 minutes here): none is left queued in front of every fetch.
    await waitFor(async () => (await queuedJobsOfHost()) === 0, {
      timeoutMs: 2 * TIMEOUT_MS,
      what: "the hung host's queued jobs back in the outbox",
    });
    const { rows: waiting } = await h.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_events
        WHERE account_id = $1 AND state = 'pending' AND enqueued_at IS NULL AND next_attempt_at > now() + interval '1 minute'`,
      [h.acct.id],
    );
    expect(waiting[0]?.n).toBeGreaterThan(0);

    // More of A's messages while it hangs: one of their jobs is the probe, and the others, queued
    // behind it, go back to the outbox at its timeout.
    const triedBefore = hung.received.length;
    await sendA(0, 4);
    await waitFor(() => hung.received.length > triedBefore, {
      timeoutMs: 2 * TIMEOUT_MS,
      what: "a probe of the hung host",
    });
    expect(hung.open()).toBeLessThanOrEqual(1);
    await waitFor(async () => (await queuedJobsOfHost()) === 0 && hung.open() <= 1, {
      timeoutMs: 2 * TIMEOUT_MS + 1_000,
      what: "the jobs behind the probe back in the outbox",
    });
    expect(hung.received.length - triedBefore).toBeLessThanOrEqual(2);

    // It answers again: the probe running now times out, the next is answered and closes the
    // circuit, and A's new messages' callbacks all arrive.
    hanging = false;
    const ids = await sendA(100, 2);
    await waitFor(
      () => ids.every((id) => hung.forMessage(id).some((r) => r.event.type === "message.delivered")),
      {
        timeoutMs: 3 * TIMEOUT_MS + 3_000,
        intervalMs: 50,
        what: "A's callbacks once its receiver answers",
      },
    );
    const seen = hung.received.map((r) => r.event.id);
    expect(new Set(seen).size).toBe(seen.length);

    // Every event of A is somewhere: delivered, in a job, or waiting in the outbox. None lost.
    const { rows: lost } = await h.pool.query<{ id: string }>(
      `SELECT e.id FROM webhook_events e
        WHERE e.account_id = $1
          AND NOT (e.state = 'delivered' OR (e.state = 'pending' AND e.enqueued_at IS NULL)
                   OR EXISTS (SELECT 1 FROM pgboss.job j
                               WHERE j.name = 'webhook-delivery' AND j.state IN ('created', 'retry', 'active')
                                 AND j.data->'events' @> jsonb_build_array(jsonb_build_object('id', e.id))))`,
      [h.acct.id],
    );
    expect(lost).toEqual([]);
  }, 40_000);
});
