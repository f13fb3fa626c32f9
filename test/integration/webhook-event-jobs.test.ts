import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.ts";
import { transactionsWithEventJobs } from "../../src/events/event-jobs.ts";
import { recordMessageEvents } from "../../src/events/events.ts";
import { WEBHOOK_QUEUE } from "../../src/queue/webhook-jobs.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * The worker's status changes enqueue their callbacks' jobs in their own transaction
 * (src/events/event-jobs.ts). Run on an API-only service: no worker and no relay touch the
 * events, so what is carried by a job was put there by the transaction under test.
 */
let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
});
afterAll(async () => {
  await t.stop();
});

/** A bulk send of n messages whose callbacks go to `url`; returns the message ids. */
async function sendTo(n: number, url: string, first: number): Promise<string[]> {
  const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
    headers: acct.headers,
    body: {
      to: Array.from({ length: n }, (_, i) => `+2637710${String(first + i).padStart(5, "0")}`),
      from: "SHIRI",
      message: "event jobs",
      webhook_url: url,
    },
  });
  expect(res.status).toBe(202);
  return (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
}

async function events(messageIds: string[], type: string) {
  const { rows } = await t.service.pool.query<{ id: string; carried: boolean; born_carried: boolean }>(
    `SELECT id, enqueued_at IS NOT NULL AS carried, enqueued_at IS NOT DISTINCT FROM created_at AS born_carried
       FROM webhook_events WHERE message_id = ANY ($1) AND type = $2`,
    [messageIds, type],
  );
  return rows;
}

/** The webhook jobs carrying any of these events: each job's group and its events. */
async function jobsCarrying(eventIds: string[]) {
  const { rows } = await t.service.pool.query<{
    group_id: string;
    events: Array<{ id: string; attempt: number }>;
  }>(
    `SELECT group_id, data->'events' AS events FROM pgboss.job
      WHERE name = $1 AND EXISTS (SELECT 1 FROM jsonb_array_elements(data->'events') e WHERE e->>'id' = ANY ($2))
      ORDER BY created_on, id`,
    [WEBHOOK_QUEUE, eventIds],
  );
  return rows;
}

const webhookJobCount = async () =>
  (
    await t.service.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1", [
      WEBHOOK_QUEUE,
    ])
  ).rows[0]?.n;

describe("a worker transaction's callback events", () => {
  it("are born carried by jobs of that transaction, grouped by host, at most a batch each", async () => {
    const toA = await sendTo(3, "http://127.0.0.1:9/a", 0);
    const toB = await sendTo(2, "http://127.0.0.1:10/b", 100);
    const transact = transactionsWithEventJobs(t.service.pool, t.service.boss, 2);
    await transact((tx) => recordMessageEvents(tx, [...toA, ...toB], "message.failed"));

    const failed = await events([...toA, ...toB], "message.failed");
    expect(failed).toHaveLength(5);
    for (const e of failed) expect(e).toMatchObject({ carried: true, born_carried: true });
    const jobs = await jobsCarrying(failed.map((e) => e.id));
    // Host A's three events in two jobs (batch size 2), host B's two in one.
    expect(jobs.map((j) => [j.group_id, j.events.length]).sort()).toEqual([
      ["127.0.0.1:10", 2],
      ["127.0.0.1:9", 1],
      ["127.0.0.1:9", 2],
    ]);
    const carried = jobs.flatMap((j) => j.events);
    expect(carried.map((e) => e.id).sort()).toEqual(failed.map((e) => e.id).sort());
    for (const e of carried) expect(e.attempt).toBe(0);

    // The API's own events (message.enqueued) are left to the relay, as before.
    const enqueued = await events([...toA, ...toB], "message.enqueued");
    expect(enqueued).toHaveLength(5);
    for (const e of enqueued) expect(e.carried).toBe(false);
  });

  it("roll back with their jobs, and leave the connection's next transaction to the relay", async () => {
    const ids = await sendTo(2, "http://127.0.0.1:11/c", 200);
    const transact = transactionsWithEventJobs(t.service.pool, t.service.boss, 100);
    const jobsBefore = await webhookJobCount();
    await expect(
      transact(async (tx) => {
        await recordMessageEvents(tx, ids, "message.failed");
        throw new Error("the status change fails after its events were recorded");
      }),
    ).rejects.toThrow("the status change fails");
    expect(await events(ids, "message.failed")).toHaveLength(0);
    expect(await webhookJobCount()).toBe(jobsBefore);

    // Every connection of the pool, reused by plain transactions: none still takes events up.
    const size = t.service.pool.totalCount;
    await Promise.all(
      Array.from({ length: size }, () =>
        withTransaction(t.service.pool, async (tx) => {
          await recordMessageEvents(tx, ids, "message.undelivered");
          await new Promise((resolve) => setTimeout(resolve, 50));
        }),
      ),
    );
    const plain = await events(ids, "message.undelivered");
    expect(plain).toHaveLength(2 * size);
    for (const e of plain) expect(e.carried).toBe(false);
    expect(await jobsCarrying(plain.map((e) => e.id))).toHaveLength(0);
  });
});
