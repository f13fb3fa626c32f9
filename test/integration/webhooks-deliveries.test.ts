import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, withTransaction } from "../../src/db/pool.ts";
import { countPendingEvents, listCallbackLog } from "../../src/webhooks/callback-log.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * The deliveries endpoints on an API-only service: no worker sends anything, so every event
 * stays as the send or the test left it, and redelivery is seen in the outbox itself.
 */
let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account();
});
afterAll(() => t.stop());

const api = (method: string, path: string, body?: unknown, headers = acct.headers) =>
  call(t.base, method, `/api/v1${path}`, { headers, ...(body === undefined ? {} : { body }) });

interface Delivery {
  id: string;
  type: string;
  message_id: string;
  url: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  completed_at: string | null;
}
const listOf = (res: { body: unknown }) => (res.body as { data: Delivery[] }).data;

/** A bulk send whose n messages each record a message.enqueued event bound to `url`; the event ids. */
async function events(
  n: number,
  headers = acct.headers,
  url = "https://hooks.example.com/sms",
): Promise<string[]> {
  const res = await api(
    "POST",
    "/sms/bulk",
    {
      to: Array.from({ length: n }, (_, i) => `+26377${String(2_000_000 + i)}`),
      from: "SHIRI",
      message: "d",
      webhook_url: url,
    },
    headers,
  );
  expect(res.status).toBe(202);
  const ids = (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
  const { rows } = await t.service.pool.query<{ id: string }>(
    "SELECT id FROM webhook_events WHERE message_id = ANY ($1) ORDER BY created_at, id",
    [ids],
  );
  return rows.map((r) => r.id);
}

const outbox = async (ids: string[]) =>
  (
    await t.service.pool.query<{
      id: string;
      state: string;
      attempts: number;
      enqueued: boolean;
      due: boolean;
      completed: boolean;
    }>(
      `SELECT id, state, attempts, enqueued_at IS NOT NULL AS enqueued, next_attempt_at <= now() AS due,
              completed_at IS NOT NULL AS completed
         FROM webhook_events WHERE id = ANY ($1) ORDER BY id`,
      [ids],
    )
  ).rows;

const kitValidation = (field: string, description: string) => ({
  status: "error",
  message: "Validation failed",
  error: {
    code: "VALIDATION_ERROR",
    description: "One or more fields failed validation",
    validation_errors: [{ field, description }],
  },
});
const NOT_FOUND = {
  status: "error",
  message: "not found",
  error: { code: "NOT_FOUND", description: "the resource does not exist" },
};

describe("GET /api/v1/webhook/deliveries", () => {
  it("lists the account's events newest first with their outcome, filtered by state and since, limited", async () => {
    const a = await t.account();
    const ids = await events(4, a.headers);
    const [failed, delivered] = ids;
    await t.service.pool.query(
      `UPDATE webhook_events SET state = 'failed', attempts = 1, last_status = 410,
              last_error = 'receiver answered 410', completed_at = now(), created_at = created_at - interval '2 hours'
        WHERE id = $1`,
      [failed],
    );
    await t.service.pool.query(
      `UPDATE webhook_events SET state = 'delivered', attempts = 2, last_status = 200, completed_at = now(),
              created_at = created_at - interval '1 hour'
        WHERE id = $1`,
      [delivered],
    );

    const all = await api("GET", "/webhook/deliveries", undefined, a.headers);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ status: "success", message: "" });
    const list = listOf(all);
    expect(list).toHaveLength(4);
    expect(list.slice(-2).map((d) => d.id)).toEqual([delivered, failed]); // oldest last
    const created = list.map((d) => d.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    expect(list.at(-1)).toEqual({
      id: failed,
      type: "message.enqueued",
      message_id: expect.any(String),
      url: "https://hooks.example.com/sms",
      state: "failed",
      attempts: 1,
      last_status: 410,
      last_error: "receiver answered 410",
      created_at: expect.stringMatching(/Z$/),
      completed_at: expect.stringMatching(/Z$/),
    });
    expect(list[0]).toMatchObject({ state: "pending", attempts: 0, last_status: null, completed_at: null });

    const onlyFailed = listOf(await api("GET", "/webhook/deliveries?state=failed", undefined, a.headers));
    expect(onlyFailed.map((d) => d.id)).toEqual([failed]);
    const two = listOf(await api("GET", "/webhook/deliveries?limit=2", undefined, a.headers));
    expect(two.map((d) => d.id)).toEqual(list.slice(0, 2).map((d) => d.id));
    const since = new Date(Date.now() - 90 * 60_000).toISOString();
    const recent = listOf(await api("GET", `/webhook/deliveries?since=${since}`, undefined, a.headers));
    expect(recent.map((d) => d.id)).toEqual(list.slice(0, 3).map((d) => d.id));
  });

  it("pages with before, the last event's id: every event once, those of one commit included", async () => {
    const a = await t.account();
    const ids = await events(7, a.headers); // one bulk send: its events share one created_at
    const { rows: times } = await t.service.pool.query<{ n: number }>(
      "SELECT count(DISTINCT created_at)::int AS n FROM webhook_events WHERE id = ANY($1)",
      [ids],
    );
    expect(times[0]?.n).toBe(1);
    const pages = async (query: string) => {
      const seen: string[] = [];
      let before: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await api(
          "GET",
          `/webhook/deliveries?${query}${before ? `&before=${before}` : ""}`,
          undefined,
          a.headers,
        );
        expect(res.status).toBe(200);
        const list = listOf(res);
        if (list.length === 0) break;
        seen.push(...list.map((d) => d.id));
        before = list.at(-1)?.id;
      }
      return seen;
    };
    const all = await pages("limit=3");
    expect(all).toHaveLength(7);
    expect([...all].sort()).toEqual([...ids].sort());

    // With a filter: three of them failed, paged two at a time from a cursor that is not one of them.
    const failed = [ids[1], ids[3], ids[5]];
    await t.service.pool.query(
      "UPDATE webhook_events SET state = 'failed', completed_at = now() WHERE id = ANY($1)",
      [failed],
    );
    const failedPages = await pages("state=failed&limit=2");
    expect([...failedPages].sort()).toEqual([...failed].sort());
    const afterFirst = listOf(
      await api("GET", `/webhook/deliveries?state=failed&before=${all[0]}`, undefined, a.headers),
    );
    // The page after the newest event: the failed ones older than it, in the list's order.
    expect(afterFirst.map((d) => d.id)).toEqual(all.slice(1).filter((id) => failed.includes(id)));
  });

  it("refuses a before that is no event of the account", async () => {
    const a = await t.account();
    const b = await t.account();
    const [theirs] = await events(1, b.headers);
    for (const before of [theirs, randomUUID()]) {
      const res = await api("GET", `/webhook/deliveries?before=${before}`, undefined, a.headers);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(kitValidation("before", "must be an event id of this account"));
    }
  });

  it("never shows another account's events", async () => {
    const a = await t.account();
    const b = await t.account();
    await events(2, a.headers);
    const res = await api("GET", "/webhook/deliveries", undefined, b.headers);
    expect(res.status).toBe(200);
    expect(listOf(res)).toEqual([]);
  });

  it.each([
    ["limit=0", "limit", "must be an integer from 1 to 100"],
    ["limit=101", "limit", "must be an integer from 1 to 100"],
    ["limit=ten", "limit", "must be an integer from 1 to 100"],
    ["limit=1&limit=2", "limit", "must be an integer from 1 to 100"],
    ["state=lost", "state", "must be pending, delivered or failed"],
    ["since=yesterday", "since", "must be an RFC 3339 date-time"],
    ["since=2025-03-01T09:30:00", "since", "must be an RFC 3339 date-time"],
    ["before=last", "before", "must be an event id"],
    [
      "before=00000000-0000-4000-8000-000000000001&before=00000000-0000-4000-8000-000000000002",
      "before",
      "must be an event id",
    ],
  ])("?%s is a Kit validation error", async (query, field, description) => {
    const res = await api("GET", `/webhook/deliveries?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(kitValidation(field, description));
  });

  it("needs authentication", async () => {
    const res = await call(t.base, "GET", "/api/v1/webhook/deliveries");
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: "UNAUTHORIZED" } });
  });
});

describe("POST /api/v1/webhook/deliveries/{event_id}/redeliver", () => {
  it("puts a settled event back in the outbox, due now, its attempts kept", async () => {
    const [id = ""] = await events(1);
    await t.service.pool.query(
      `UPDATE webhook_events SET state = 'failed', attempts = 3, last_status = 500, completed_at = now(),
              enqueued_at = now() - interval '1 hour', next_attempt_at = now() - interval '1 hour'
        WHERE id = $1`,
      [id],
    );
    const res = await api("POST", `/webhook/deliveries/${id}/redeliver`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: "success",
      message: "redelivery scheduled",
      data: { id, state: "pending", attempts: 3, last_status: 500, completed_at: null },
    });
    expect(await outbox([id])).toEqual([
      { id, state: "pending", attempts: 3, enqueued: false, due: true, completed: false },
    ]);
  });

  it("brings a pending event waiting out its back-off forward, and leaves one a job already carries in it", async () => {
    const [waiting = "", carried = ""] = await events(2);
    await t.service.pool.query(
      "UPDATE webhook_events SET attempts = 1, next_attempt_at = now() + interval '1 hour' WHERE id = $1",
      [waiting],
    );
    await t.service.pool.query("UPDATE webhook_events SET enqueued_at = now() WHERE id = $1", [carried]);
    for (const id of [waiting, carried])
      expect((await api("POST", `/webhook/deliveries/${id}/redeliver`)).status).toBe(202);
    const rows = new Map((await outbox([waiting, carried])).map((r) => [r.id, r]));
    expect(rows.get(waiting)).toMatchObject({ state: "pending", enqueued: false, due: true });
    expect(rows.get(carried)).toMatchObject({ state: "pending", enqueued: true }); // not sent twice
  });

  it("is a Kit 404 for an unknown id, a malformed id and another account's event", async () => {
    const other = await t.account();
    const [theirs = ""] = await events(1, other.headers);
    for (const id of [randomUUID(), "not-a-uuid", theirs]) {
      const res = await api("POST", `/webhook/deliveries/${id}/redeliver`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
    expect(await outbox([theirs])).toMatchObject([{ state: "pending", enqueued: false }]);
  });
});

describe("POST /api/v1/webhook/deliveries/redeliver", () => {
  it("redelivers every event of the account created in [since, until) and answers how many", async () => {
    const a = await t.account();
    const b = await t.account();
    const ids = await events(3, a.headers);
    const others = await events(1, b.headers);
    await t.service.pool.query(
      "UPDATE webhook_events SET state = 'delivered', attempts = 1, completed_at = now() WHERE id = ANY ($1)",
      [[...ids, ...others]],
    );
    // The first event falls before the range.
    await t.service.pool.query(
      "UPDATE webhook_events SET created_at = now() - interval '2 hours' WHERE id = $1",
      [ids[0]],
    );
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const until = new Date(Date.now() + 60_000).toISOString();
    const res = await api("POST", "/webhook/deliveries/redeliver", { since, until }, a.headers);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      status: "success",
      message: "redelivery scheduled",
      data: { redelivered: 2 },
    });
    const rows = new Map((await outbox([...ids, ...others])).map((r) => [r.id, r.state]));
    expect(ids.map((id) => rows.get(id))).toEqual(["delivered", "pending", "pending"]);
    expect(rows.get(others[0] ?? "")).toBe("delivered");
    const empty = await api(
      "POST",
      "/webhook/deliveries/redeliver",
      { since: "2020-01-01T00:00:00Z", until: "2020-01-02T00:00:00+02:00" },
      a.headers,
    );
    expect(empty.body).toMatchObject({ data: { redelivered: 0 } });
  });

  it("refuses a range of more than 10,000 events, changing nothing", async () => {
    const a = await t.account();
    const [seed = ""] = await events(1, a.headers);
    await t.service.pool.query(
      `INSERT INTO webhook_events (id, account_id, message_id, type, url, payload, state, completed_at)
       SELECT gen_random_uuid(), account_id, message_id, type, url, payload, 'delivered', now()
         FROM webhook_events, generate_series(1, 10000) WHERE id = $1`,
      [seed],
    );
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const until = new Date(Date.now() + 60_000).toISOString();
    const res = await api("POST", "/webhook/deliveries/redeliver", { since, until }, a.headers);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(kitValidation("until", "the range holds more than 10000 events: split it"));
    const { rows } = await t.service.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_events WHERE account_id = $1 AND state = 'pending'",
      [a.id],
    );
    expect(rows[0]?.n).toBe(1); // the seed only, as the send left it
  });

  it("without a body names both bounds", async () => {
    const res = await api("POST", "/webhook/deliveries/redeliver", {});
    expect(res.status).toBe(400);
    expect((res.body as { error: { validation_errors: unknown } }).error.validation_errors).toEqual([
      { field: "since", description: "is required" },
      { field: "until", description: "is required" },
    ]);
  });

  it.each([
    [{ since: "2025-03-01T00:00:00Z" }, "until", "is required"],
    [{ since: "yesterday", until: "2025-03-01T00:00:00Z" }, "since", "must be an RFC 3339 date-time"],
    [{ since: "2025-03-02T00:00:00Z", until: "2025-03-01T00:00:00Z" }, "until", "must be after since"],
    [
      { since: "2025-03-01T00:00:00Z", until: "2025-03-02T00:00:00Z", state: "failed" },
      "state",
      "is not allowed",
    ],
  ])("%j is a Kit validation error", async (body, field, description) => {
    const res = await api("POST", "/webhook/deliveries/redeliver", body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(kitValidation(field, description));
  });
});

describe("the outbox's backlog (shiri_webhook_events_pending)", () => {
  it("counts pending events, waiting for a job or carried by one, and no settled event", async () => {
    const before = await countPendingEvents(t.service.pool);
    const [waiting = "", carried = "", delivered = "", failed = ""] = await events(4);
    await t.service.pool.query("UPDATE webhook_events SET enqueued_at = now() WHERE id = ANY ($1)", [
      [carried, delivered, failed],
    ]);
    await t.service.pool.query(
      `UPDATE webhook_events SET state = CASE WHEN id = $1 THEN 'delivered' ELSE 'failed' END, completed_at = now()
        WHERE id = ANY ($2)`,
      [delivered, [delivered, failed]],
    );
    expect((await outbox([waiting, carried])).map((r) => r.enqueued).sort()).toEqual([false, true]);
    expect(await countPendingEvents(t.service.pool)).toBe(before + 2);
  });
});

describe("a page of pending events", () => {
  it("reads the outbox's backlog, not every event the account kept", async () => {
    // A database of its own: the events above leave a backlog no outbox in service has.
    const own = await startTestService();
    try {
      const big = await own.account();
      await own.service.pool.query(
        `INSERT INTO webhook_events (id, account_id, message_id, type, url, payload, state, attempts,
                                     created_at, completed_at, enqueued_at)
         SELECT gen_random_uuid(), $1, gen_random_uuid(), 'message.delivered', 'https://hooks.example.com/sms',
                '{}'::json, 'delivered', 1, now() - g * interval '1 second', now(), now()
           FROM generate_series(1, 20000) g`,
        [big.id],
      );
      const bulk = await call(own.base, "POST", "/api/v1/sms/bulk", {
        headers: big.headers,
        body: {
          to: ["+263772000001", "+263772000002"],
          from: "SHIRI",
          message: "d",
          webhook_url: "https://hooks.example.com/sms",
        },
      });
      expect(bulk.status).toBe(202);
      const { rows: pending } = await own.service.pool.query<{ id: string }>(
        "SELECT id FROM webhook_events WHERE account_id = $1 AND state = 'pending' ORDER BY id",
        [big.id],
      );
      await own.service.pool.query("UPDATE webhook_events SET enqueued_at = now() WHERE id = $1", [
        pending[0]?.id,
      ]);
      // As Shiri's vacuum pass (or autovacuum) leaves the table's statistics.
      await own.service.pool.query("ANALYZE webhook_events");
      // A connection of its own: a backend's table counts include its earlier statements' until
      // they are flushed, a second later.
      const probe = createPool(own.database.url, 1);
      const read = await withTransaction(probe, async (tx) => {
        const page = await listCallbackLog(tx, big.id, { limit: 20, state: "pending" });
        const { rows } = await tx.query<{ read: number }>(
          `SELECT (COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0))::int AS read
             FROM pg_stat_xact_user_tables WHERE relname = 'webhook_events'`,
        );
        return { ids: page?.map((e) => e.id).sort(), rows: rows[0]?.read ?? -1 };
      }).finally(() => probe.end());
      expect(read.ids).toEqual(pending.map((e) => e.id));
      expect(pending).toHaveLength(2);
      // Before, it walked the account's 20,002 events for the two pending among them.
      expect(read.rows).toBeLessThan(100);
    } finally {
      await own.stop();
    }
  });
});
