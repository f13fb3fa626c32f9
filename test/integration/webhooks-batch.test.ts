import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { signingSecrets } from "../../src/webhooks/account-webhooks.ts";
import {
  type BatchContext,
  deliverBatch,
  type EventRow,
  LOAD_EVENTS,
} from "../../src/webhooks/deliver-batch.ts";
import { webhookDeliveryOptions } from "../../src/webhooks/delivery.ts";
import { callbackAgents } from "../../src/webhooks/post-callback.ts";
import { WEBHOOK_QUEUE } from "../../src/webhooks/queue.ts";
import { deleteSettledEvents } from "../../src/webhooks/retention.ts";
import { requeueStrandedEvents, STRANDED_AFTER_SECONDS } from "../../src/webhooks/stranded.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { type Answer, type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * One delivery job, run by hand on an API-only service (no worker competes for the events):
 * what a batch sends, records and hands back.
 */
let t: TestService;
let acct: TestAccount;
const receivers: Receiver[] = [];
const agents = callbackAgents();
const options = webhookDeliveryOptions(loadConfig({ WEBHOOK_RETRY_BASE_MS: "60000" }));
const ctx = (): BatchContext => ({
  pool: t.service.pool,
  logger: createLogger("silent"),
  metrics: t.service.metrics,
  post: { timeoutMs: 2_000, allowPrivate: true, agents },
  retry: options.retry,
  stopping: () => false,
});

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
});
afterAll(async () => {
  agents.http.destroy();
  for (const r of receivers) await r.stop();
  await t.stop();
});

/** A bulk send of n messages to a fresh receiver; returns the receiver and the send's events. */
async function sendTo(n: number, answer: () => Answer) {
  const rx = await startReceiver(answer);
  receivers.push(rx);
  const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
    headers: acct.headers,
    body: {
      to: Array.from({ length: n }, (_, i) => `+26377100000${i}`),
      from: "SHIRI",
      message: "b",
      webhook_url: rx.url,
    },
  });
  const ids = (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
  const { rows } = await t.service.pool.query<{ id: string }>(
    "SELECT id FROM webhook_events WHERE message_id = ANY ($1) ORDER BY created_at, id",
    [ids],
  );
  return { rx, job: { events: rows.map((r) => ({ id: r.id, attempt: 0 })) } };
}

async function run(job: { events: Array<{ id: string; attempt: number }> }) {
  const { rows } = await t.service.pool.query<EventRow>(LOAD_EVENTS, [job.events.map((e) => e.id)]);
  const secrets = await signingSecrets(t.service.pool, [acct.id], options.secretGraceMs);
  await deliverBatch(ctx(), job, new Map(rows.map((r) => [r.id, r])), secrets);
}

const states = async (ids: string[]) =>
  (
    await t.service.pool.query<{
      id: string;
      state: string;
      attempts: number;
      due_in_s: number;
      enqueued: boolean;
    }>(
      `SELECT id, state, attempts, extract(epoch FROM next_attempt_at - now())::int AS due_in_s,
              enqueued_at IS NOT NULL AS enqueued
         FROM webhook_events WHERE id = ANY ($1)`,
      [ids],
    )
  ).rows;

describe("a delivery job", () => {
  it("sends its events one by one and records them all as delivered", async () => {
    const { rx, job } = await sendTo(5, () => 200);
    await run(job);
    expect(rx.received.map((r) => r.event.id)).toEqual(job.events.map((e) => e.id));
    for (const s of await states(job.events.map((e) => e.id)))
      expect(s).toMatchObject({ state: "delivered", attempts: 1 });
  });

  it("stops at the first failure worth retrying: the rest wait out the same back-off, no attempt counted", async () => {
    const { rx, job } = await sendTo(5, () => 503);
    await run(job);
    expect(rx.received).toHaveLength(1);
    const rows = await states(job.events.map((e) => e.id));
    const tried = rows.find((r) => r.id === job.events[0]?.id);
    expect(tried).toMatchObject({ state: "pending", attempts: 1, enqueued: false });
    expect(tried?.due_in_s).toBeGreaterThanOrEqual(29); // 30–60 s with a 60 s base
    for (const r of rows.filter((r) => r.id !== tried?.id))
      expect(r).toMatchObject({ state: "pending", attempts: 0, enqueued: false, due_in_s: tried?.due_in_s });
  });

  it("treats a 404 like any failure worth retrying: the rest of the batch waits, nothing is failed", async () => {
    const { rx, job } = await sendTo(3, () => 404);
    await run(job);
    expect(rx.received).toHaveLength(1);
    const rows = await states(job.events.map((e) => e.id));
    expect(rows.map((r) => r.state)).toEqual(["pending", "pending", "pending"]);
    expect(rows.map((r) => r.attempts).sort()).toEqual([0, 0, 1]);
  });

  it("goes on past a 410 Gone, which fails only its own event", async () => {
    let n = 0;
    const { rx, job } = await sendTo(3, () => (++n === 1 ? 410 : 200));
    await run(job);
    expect(rx.received).toHaveLength(3);
    const rows = await states(job.events.map((e) => e.id));
    expect(rows.map((r) => r.state).sort()).toEqual(["delivered", "delivered", "failed"]);
  });

  it("run twice (pg-boss delivers at least once), sends nothing the second time", async () => {
    const { rx, job } = await sendTo(3, () => 200);
    await run(job);
    await run(job);
    expect(rx.received).toHaveLength(3);
  });

  it("settled events are deleted after the retention period; pending ones never", async () => {
    const delivered = await sendTo(2, () => 200);
    await run(delivered.job);
    const pending = await sendTo(1, () => 200); // never run: stays pending
    const old = [...delivered.job.events, ...pending.job.events].map((e) => e.id);
    await t.service.pool.query(
      `UPDATE webhook_events SET created_at = now() - interval '40 days',
              completed_at = CASE WHEN completed_at IS NULL THEN NULL ELSE now() - interval '31 days' END
        WHERE id = ANY ($1)`,
      [old],
    );
    expect(await deleteSettledEvents(t.service.pool, 30, 1000)).toBeGreaterThanOrEqual(2);
    expect((await states(old)).map((r) => r.id)).toEqual(pending.job.events.map((e) => e.id));
  });
});

describe("the stranded-event sweeper", () => {
  it("puts back in the outbox pending events enqueued long ago that no live job carries, and only those", async () => {
    const { job } = await sendTo(5, () => 200);
    const [lost, carried, recent, settled, due] = job.events.map((e) => e.id) as [
      string,
      string,
      string,
      string,
      string,
    ];
    const pool = t.service.pool;
    const ago = `${STRANDED_AFTER_SECONDS + 60} seconds`;
    // lost: its job is gone; carried: a live job (waiting in the queue) still has it; recent: enqueued
    // just now; settled: delivered; due: never enqueued (the relay's business, not the sweeper's).
    await pool.query(
      `UPDATE webhook_events SET enqueued_at = now() - $2::interval, next_attempt_at = now() - $2::interval
        WHERE id = ANY ($1)`,
      [[lost, carried, settled], ago],
    );
    await pool.query("UPDATE webhook_events SET enqueued_at = now() WHERE id = $1", [recent]);
    await pool.query("UPDATE webhook_events SET state = 'delivered', completed_at = now() WHERE id = $1", [
      settled,
    ]);
    await t.service.boss.insert(WEBHOOK_QUEUE, [
      { data: { events: [{ id: carried, attempt: 0 }] }, startAfter: 3600 },
    ]);

    expect(await requeueStrandedEvents(pool, { limit: 100 })).toBe(1);
    const rows = await states(job.events.map((e) => e.id));
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(lost)).toMatchObject({ state: "pending", attempts: 0, enqueued: false });
    expect(byId.get(lost)?.due_in_s).toBeLessThanOrEqual(0);
    expect(byId.get(carried)).toMatchObject({ state: "pending", enqueued: true });
    expect(byId.get(recent)).toMatchObject({ state: "pending", enqueued: true });
    expect(byId.get(settled)).toMatchObject({ state: "delivered", enqueued: true });
    expect(byId.get(due)).toMatchObject({ state: "pending", enqueued: false });
    // Nothing left to do on a second pass.
    expect(await requeueStrandedEvents(pool, { limit: 100 })).toBe(0);
  });

  it("is bounded: one pass takes at most `limit` events, the next pass the rest", async () => {
    const { job } = await sendTo(5, () => 200);
    const ids = job.events.map((e) => e.id);
    await t.service.pool.query(
      "UPDATE webhook_events SET enqueued_at = now() - interval '1 hour' WHERE id = ANY ($1)",
      [ids],
    );
    expect(await requeueStrandedEvents(t.service.pool, { limit: 3 })).toBe(3);
    expect(await requeueStrandedEvents(t.service.pool, { limit: 3 })).toBe(2);
    expect((await states(ids)).every((r) => !r.enqueued)).toBe(true);
  });
});
