import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { WEBHOOK_QUEUE } from "../../src/queue/webhook-jobs.ts";
import { callbackSettings } from "../../src/webhooks/account-webhooks.ts";
import { callbackConnections } from "../../src/webhooks/callback-connections.ts";
import { callbackOptions } from "../../src/webhooks/callbacks.ts";
import { deleteSettledEvents } from "../../src/webhooks/retention.ts";
import {
  type BatchContext,
  type EventRow,
  LOAD_EVENTS,
  sendCallbackBatch,
} from "../../src/webhooks/send-batch.ts";
import { verifySignature } from "../../src/webhooks/signing.ts";
import { requeueStrandedEvents, STRANDED_AFTER_SECONDS } from "../../src/webhooks/stranded.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { type Answer, type Received, type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * One delivery job, run by hand on an API-only service (no worker competes for the events):
 * what a batch sends, records and hands back.
 */
let t: TestService;
let acct: TestAccount;
const receivers: Receiver[] = [];
const connections = callbackConnections();
const options = callbackOptions(loadConfig({ WEBHOOK_RETRY_BASE_MS: "60000" }));
const ctx = (pipelineDepth = 1, timeoutMs = 2_000): BatchContext => ({
  pool: t.service.pool,
  pipelineDepth,
  logger: createLogger("silent"),
  metrics: t.service.metrics,
  post: { timeoutMs, allowPrivate: true, connections },
  retry: options.retry,
  stopping: () => false,
});

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
});
afterAll(async () => {
  connections.close();
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

async function run(
  job: { events: Array<{ id: string; attempt: number }> },
  pipelineDepth = 1,
  timeoutMs = 2_000,
) {
  const { rows } = await t.service.pool.query<EventRow>(LOAD_EVENTS, [job.events.map((e) => e.id)]);
  const accounts = [...new Set(rows.map((r) => r.account_id))];
  const settings = await callbackSettings(t.service.pool, accounts, options.secretGraceMs);
  return sendCallbackBatch(ctx(pipelineDepth, timeoutMs), job, new Map(rows.map((r) => [r.id, r])), settings);
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

  it("stops at a 410 Gone: its event fails, and the job's other events to the URL fail unsent", async () => {
    let n = 0;
    const { rx, job } = await sendTo(3, () => (++n === 1 ? 410 : 200));
    await run(job);
    // The 410 stops the account's callbacks to the URL (docs/decisions/0004).
    expect(rx.received).toHaveLength(1);
    const rows = await states(job.events.map((e) => e.id));
    expect(rows.map((r) => r.state)).toEqual(["failed", "failed", "failed"]);
  });

  it("pipelined, sends its events in order and records each delivered once", async () => {
    const { rx, job } = await sendTo(40, () => 200);
    await run(job, 8);
    expect(rx.received.map((r) => r.event.id)).toEqual(job.events.map((e) => e.id));
    for (const s of await states(job.events.map((e) => e.id)))
      expect(s).toMatchObject({ state: "delivered", attempts: 1 });
  });

  it("pipelined, records what was sent before a failure came back and hands back the rest", async () => {
    let n = 0;
    const { rx, job } = await sendTo(40, () => (++n >= 10 ? 503 : 200));
    await run(job, 8);
    const ids = job.events.map((e) => e.id);
    // The first nine delivered; the tenth failed, and up to seven written behind it failed too.
    const sent = rx.received.length;
    expect(sent).toBeGreaterThanOrEqual(10);
    expect(sent).toBeLessThanOrEqual(17);
    expect(rx.received.map((r) => r.event.id)).toEqual(ids.slice(0, sent));
    const byId = new Map((await states(ids)).map((r) => [r.id, r]));
    const row = (i: number) => byId.get(ids[i] as string);
    for (let i = 0; i < 9; i++) expect(row(i)).toMatchObject({ state: "delivered", attempts: 1 });
    for (let i = 9; i < sent; i++)
      expect(row(i)).toMatchObject({ state: "pending", attempts: 1, enqueued: false });
    // Never sent: back in the outbox with no attempt counted, due with the failure's back-off.
    for (let i = sent; i < 40; i++)
      expect(row(i)).toMatchObject({
        state: "pending",
        attempts: 0,
        enqueued: false,
        due_in_s: row(9)?.due_in_s,
      });
  });

  it("pipelined to a host that hangs, counts an attempt for the one request sent; the rest wait unsent", async () => {
    const retries = async () =>
      (await t.service.metrics.webhookDeliveries.get()).values.find((v) => v.labels.outcome === "retry")
        ?.value ?? 0;
    const before = await retries();
    const { rx, job } = await sendTo(10, () => "hang");
    // A new connection carries one request until it is answered: the other seven of the depth
    // wait unwritten behind it, and go nowhere once it times out.
    const host = await run(job, 8, 500);
    expect(rx.received).toHaveLength(1);
    // Its host's circuit still hears of the timeout (docs/decisions/0040).
    expect(host).toEqual({ answered: false, timedOut: true });
    const ids = job.events.map((e) => e.id);
    const byId = new Map((await states(ids)).map((r) => [r.id, r]));
    const sentId = rx.received[0]?.event.id as string;
    expect(byId.get(sentId)).toMatchObject({ state: "pending", attempts: 1, enqueued: false });
    // Never sent: back in the outbox with no attempt counted, due with the timeout's back-off.
    for (const id of ids.filter((id) => id !== sentId))
      expect(byId.get(id)).toMatchObject({
        state: "pending",
        attempts: 0,
        enqueued: false,
        due_in_s: byId.get(sentId)?.due_in_s,
      });
    expect((await retries()) - before).toBe(1);
  });

  it("pipelined, a 410 fails its event; those sent behind it keep their answers, the rest fail unsent", async () => {
    let n = 0;
    const { rx, job } = await sendTo(30, () => (++n === 3 ? 410 : 200));
    await run(job, 8);
    const ids = job.events.map((e) => e.id);
    const sent = rx.received.length;
    expect(sent).toBeGreaterThanOrEqual(3);
    expect(sent).toBeLessThanOrEqual(10);
    const byId = new Map((await states(ids)).map((r) => [r.id, r]));
    const state = (i: number) => byId.get(ids[i] as string)?.state;
    expect(ids.map((_, i) => state(i))).toEqual([
      "delivered",
      "delivered",
      "failed",
      ...Array(sent - 3).fill("delivered"),
      ...Array(30 - sent).fill("failed"),
    ]);
    for (let i = sent; i < 30; i++) expect(byId.get(ids[i] as string)?.attempts).toBe(0);
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

describe("a delivery job to an account webhook that takes batches", () => {
  /** An account whose webhook (a fresh receiver) takes `batchSize` events a request; n messages sent. */
  async function batchedSend(n: number, batchSize: number, answer: () => Answer, ownUrl?: string) {
    const rx = await startReceiver(answer);
    receivers.push(rx);
    const account = await t.account();
    const put = await call(t.base, "PUT", "/api/v1/webhook", {
      headers: account.headers,
      body: { url: rx.url, events: ["message.enqueued"], batch_size: batchSize },
    });
    const secret = (put.body as { data: { signing_secret: string } }).data.signing_secret;
    const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
      headers: account.headers,
      body: {
        to: Array.from({ length: n }, (_, i) => `+26377200000${i}`),
        from: "SHIRI",
        message: "batched",
        ...(ownUrl ? { webhook_url: ownUrl } : {}),
      },
    });
    const ids = (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    const { rows } = await t.service.pool.query<{ id: string }>(
      "SELECT id FROM webhook_events WHERE message_id = ANY ($1) ORDER BY created_at, id",
      [ids],
    );
    return { rx, secret, job: { events: rows.map((r) => ({ id: r.id, attempt: 0 })) } };
  }

  it("sends the events as signed JSON arrays of at most batch_size, in order, and records each delivered", async () => {
    const { rx, secret, job } = await batchedSend(10, 4, () => 200);
    await run(job);
    const requests = new Map<number, Received[]>();
    for (const r of rx.received) requests.set(r.request, [...(requests.get(r.request) ?? []), r]);
    expect([...requests.values()].map((events) => events.length)).toEqual([4, 4, 2]);
    expect(rx.received.map((r) => r.event.id)).toEqual(job.events.map((e) => e.id));
    for (const [, events] of requests) {
      const { headers, body } = events[0] as Received;
      expect(events.every((r) => r.batched)).toBe(true);
      expect(headers["shiri-event-count"]).toBe(String(events.length));
      expect(headers["shiri-event-id"]).toBeUndefined();
      expect(verifySignature(secret, body, String(headers["shiri-signature"]))).toBe(true);
      for (const r of events)
        expect(r.event).toMatchObject({ type: "message.enqueued", data: { status: "enqueued" } });
    }
    for (const s of await states(job.events.map((e) => e.id)))
      expect(s).toMatchObject({ state: "delivered", attempts: 1 });
  });

  it("a batch the receiver fails is retried whole; the rest of the job waits out the same back-off", async () => {
    const { rx, job } = await batchedSend(6, 4, () => 500);
    await run(job);
    expect(new Set(rx.received.map((r) => r.request))).toEqual(new Set([1]));
    const rows = await states(job.events.map((e) => e.id));
    const tried = new Set(rx.received.map((r) => r.event.id));
    expect(tried.size).toBe(4);
    for (const r of rows) {
      expect(r).toMatchObject({ state: "pending", attempts: tried.has(r.id) ? 1 : 0, enqueued: false });
      expect(r.due_in_s).toBeGreaterThanOrEqual(29);
    }
  });

  it("events bound for a send's own webhook_url still go one per request", async () => {
    const own = await startReceiver(() => 200);
    receivers.push(own);
    const { rx, job } = await batchedSend(3, 10, () => 200, own.url);
    await run(job);
    expect(rx.received).toHaveLength(0);
    expect(own.received.map((r) => [r.request, r.batched])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    expect(own.received.map((r) => r.headers["shiri-event-id"])).toEqual(job.events.map((e) => e.id));
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
