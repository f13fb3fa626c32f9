import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort as closedPort } from "../../bench/lib/shiri-process.ts";
import { audit } from "../../src/audit/audit.ts";
import { openMark, sampleOpenMessages } from "../../src/lifecycle/open-mark.ts";
import { type RetentionPolicy, runRetention } from "../../src/retention/retention.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call, startTestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";
import { type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * Retention: final messages past MESSAGE_RETENTION_DAYS go with their parts, settled callback
 * events past theirs, emptied bulk sends, old mobile-originated messages and expired idempotency
 * keys too; recent rows and messages still holding money stay, and the ledger is never touched
 * (`shiri audit` still finds every balance equal to it). Telecel points at a closed port, so its
 * messages stay waiting with their charge held.
 */
let h: DispatchHarness;
let receiver: Receiver;

/** Chunks of 2: every table takes several transactions, as a real backlog would. */
const POLICY: RetentionPolicy = {
  messageDays: 90,
  webhookEventDays: 30,
  idempotencyHours: 24,
  chunk: 2,
  pauseMs: 0,
};

beforeAll(async () => {
  receiver = await startReceiver();
  h = await startDispatchHarness({
    env: {
      SMPP_TELECEL_PORT: String(await closedPort()),
      // Nothing expires, and the service's own retention pass never runs during the test.
      MESSAGE_VALIDITY_HOURS: "100000",
      RETENTION_INTERVAL_MS: "3600000",
    },
  });
});
afterAll(async () => {
  await h?.stop();
  await receiver?.stop();
});

async function send(to: string, extra: Record<string, unknown> = {}, headers = h.acct.headers) {
  const res = await call(h.t.base, "POST", "/api/v1/sms", {
    headers,
    body: { to, from: "SHIRI", message: "retention", webhook_url: receiver.url, ...extra },
  });
  expect(res.status).toBe(202);
  return (res.body as { id: string }).id;
}

const count = async (sql: string, values: unknown[]) =>
  (await h.pool.query<{ n: number }>(sql, values)).rows[0]?.n ?? 0;

/** Moves messages, their parts and their settled events `days` into the past. */
async function age(ids: readonly string[], days: number): Promise<void> {
  const values = [ids, days];
  await h.pool.query(
    `UPDATE messages SET received_at = received_at - make_interval(days => $2),
                         created_at = created_at - make_interval(days => $2) WHERE id = ANY($1)`,
    values,
  );
  await h.pool.query(
    "UPDATE message_parts SET accepted_at = accepted_at - make_interval(days => $2) WHERE message_id = ANY($1)",
    values,
  );
  await h.pool.query(
    `UPDATE webhook_events SET created_at = created_at - make_interval(days => $2),
                               completed_at = completed_at - make_interval(days => $2) WHERE message_id = ANY($1)`,
    values,
  );
  await h.pool.query(
    `UPDATE bulk_sends SET created_at = created_at - make_interval(days => $2)
      WHERE id IN (SELECT bulk_id FROM messages WHERE id = ANY($1))`,
    values,
  );
}

describe("retention", () => {
  it("deletes old final messages, parts and events; keeps recent and held ones; the ledger stays whole", async () => {
    // Old: two delivered, one unroutable (failed at once, charged), a bulk send of two, one waiting on telecel.
    const oldFinal = [await send("+263771000001"), await send("+263711000002"), await send("+15550000003")];
    const bulk = await call(h.t.base, "POST", "/api/v1/sms/bulk", {
      headers: h.acct.headers,
      body: { to: ["+263771000004", "+263711000005"], from: "SHIRI", message: "retention" },
    });
    expect(bulk.status).toBe(202);
    oldFinal.push(...(bulk.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id));
    const oldHeld = await send("+263731000006");
    // Recent: one delivered, one waiting on telecel.
    const recentFinal = await send("+263771000007");
    const recentHeld = await send("+263731000008");
    const delivered = [...oldFinal.filter((_, i) => i !== 2), recentFinal];
    await h.waitUntilSettled([...oldFinal, recentFinal], { delivered: true, timeoutMs: 30_000 });
    // Every event of a final message settled (delivered to the receiver), so it is retention's to judge.
    await waitFor(
      async () =>
        (await count(
          "SELECT count(*)::int AS n FROM webhook_events WHERE message_id = ANY($1) AND state <> 'delivered'",
          [[...oldFinal, recentFinal]],
        )) === 0,
      { timeoutMs: 20_000, what: "every callback of the final messages delivered" },
    );
    // Idempotency keys: one past its 24 hours, one fresh.
    const keyed = [
      await send("+263771000009", {}, { ...h.acct.headers, "idempotency-key": "retention-old" }),
      await send("+263771000010", {}, { ...h.acct.headers, "idempotency-key": "retention-new" }),
    ];
    // Settled before the ledger is read, so nothing moves money while retention runs.
    await h.waitUntilSettled(keyed, { delivered: true, timeoutMs: 30_000 });
    await h.pool.query(
      "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'retention-old'",
    );
    // Mobile-originated: one past the window, one recent.
    await h.pool.query(
      `INSERT INTO mobile_originated (operator, source_addr, source_addr_ton, source_addr_npi, destination_addr,
                                      esm_class, data_coding, body, received_at)
       VALUES ('econet', '263770000001', 1, 1, 'SHIRI', 0, 0, 'old', now() - interval '91 days'),
              ('econet', '263770000002', 1, 1, 'SHIRI', 0, 0, 'new', now())`,
    );
    // Inbound messages: the same window.
    await h.pool.query(
      `INSERT INTO inbound_messages (id, link, operator, "from", "to", body, encoding, parts, complete, received_at)
       VALUES (gen_random_uuid(), 'econet', 'econet', '263770000001', '33000', 'old', 'gsm7', 1, true,
               now() - interval '91 days'),
              (gen_random_uuid(), 'econet', 'econet', '263770000002', '33000', 'new', 'gsm7', 1, true, now())`,
    );
    await age([...oldFinal, oldHeld], 91);

    expect(
      await count("SELECT count(*)::int AS n FROM message_parts WHERE message_id = ANY($1)", [delivered]),
    ).toBe(delivered.length);
    const ledgerBefore = await h.pool.query("SELECT * FROM ledger_entries ORDER BY id");
    // Events have a window of their own: the old waiting message's settled message.enqueued goes too.
    const eventsOfOld = await count(
      "SELECT count(*)::int AS n FROM webhook_events WHERE message_id = ANY($1)",
      [[...oldFinal, oldHeld]],
    );
    expect(eventsOfOld).toBeGreaterThan(0);

    const pass = await runRetention(h.pool, POLICY);
    expect(pass).toEqual({
      messages: oldFinal.length,
      bulk_sends: 1,
      mobile_originated: 1,
      inbound_messages: 1,
      webhook_events: eventsOfOld,
      idempotency_keys: 1,
    });

    const left = await h.pool.query<{ id: string; billing: string }>(
      "SELECT id, billing FROM messages WHERE id = ANY($1) ORDER BY received_at",
      [[...oldFinal, oldHeld, recentFinal, recentHeld]],
    );
    expect(left.rows.map((r) => r.id)).toEqual([oldHeld, recentFinal, recentHeld]);
    expect(left.rows.find((r) => r.id === oldHeld)?.billing).toBe("held");
    expect(
      await count("SELECT count(*)::int AS n FROM message_parts WHERE message_id = ANY($1)", [oldFinal]),
    ).toBe(0);
    expect(
      await count("SELECT count(*)::int AS n FROM message_parts WHERE message_id = $1", [recentFinal]),
    ).toBe(1);
    expect(
      await count("SELECT count(*)::int AS n FROM webhook_events WHERE message_id = ANY($1)", [oldFinal]),
    ).toBe(0);
    // enqueued, success and delivered of the recent delivered one; enqueued of the recent waiting one.
    expect(
      await count("SELECT count(*)::int AS n FROM webhook_events WHERE message_id = ANY($1)", [
        [recentFinal, recentHeld],
      ]),
    ).toBe(4);
    expect(await count("SELECT count(*)::int AS n FROM bulk_sends", [])).toBe(0);
    expect(await count("SELECT count(*)::int AS n FROM mobile_originated WHERE body = 'new'", [])).toBe(1);
    expect(await count("SELECT count(*)::int AS n FROM mobile_originated", [])).toBe(1);
    expect((await h.pool.query("SELECT body FROM inbound_messages")).rows).toEqual([{ body: "new" }]);
    expect(
      (await h.pool.query("SELECT key FROM idempotency_keys WHERE key LIKE 'retention-%'")).rows.map(
        (r) => r.key,
      ),
    ).toEqual(["retention-new"]);

    // The ledger is untouched, and still agrees with every balance and every held charge.
    expect((await h.pool.query("SELECT * FROM ledger_entries ORDER BY id")).rows).toEqual(ledgerBefore.rows);
    const report = await audit(h.pool, { stuckMinutes: 1_000_000, receiptHours: 1_000_000 });
    expect(report.balance_mismatches.count, JSON.stringify(report)).toBe(0);
    expect(report.clean, JSON.stringify(report)).toBe(true);

    // Nothing more to do: a second pass deletes nothing.
    expect(await runRetention(h.pool, POLICY)).toEqual({
      messages: 0,
      bulk_sends: 0,
      mobile_originated: 0,
      inbound_messages: 0,
      webhook_events: 0,
      idempotency_keys: 0,
    });
  }, 90_000);

  it("keeps a sent message whose receipt may still come until its validity has ended", async () => {
    const [waiting, ended, noValidity] = [
      await send("+263771000011"),
      await send("+263771000012"),
      await send("+263771000013"),
    ];
    await h.waitUntilSettled([waiting, ended, noValidity], { delivered: true, timeoutMs: 30_000 });
    // As a send with a long validity_period leaves them when the handset is off: accepted, no receipt
    // yet, and (aged) past the retention window; the carrier keeps trying the first a while longer.
    await h.pool.query(
      `UPDATE messages SET delivered_at = NULL, operator_response = 'ESME_ROK',
              expires_at = CASE WHEN id = $1 THEN now() + interval '2 days' ELSE now() - interval '2 hours' END
        WHERE id = ANY($2)`,
      [waiting, [waiting, ended]],
    );
    // One with no validity of its own, whose receipt never came (a carrier that sends none).
    await h.pool.query(
      "UPDATE messages SET delivered_at = NULL, operator_response = 'ESME_ROK' WHERE id = $1",
      [noValidity],
    );
    await age([waiting, ended, noValidity], 91);
    await runRetention(h.pool, POLICY);
    const { rows } = await h.pool.query<{ id: string }>("SELECT id FROM messages WHERE id = ANY($1)", [
      [waiting, ended, noValidity],
    ]);
    // Before, both went: the first's receipt, when the handset came back, matched nothing.
    expect(rows.map((r) => r.id)).toEqual([waiting]);
  });

  it("samples held charges from the open-messages watermark, which never passes a message still open", async () => {
    // As a migration leaves it: before every message. One sample moves it up to the oldest open
    // message (the one waiting for telecel 91 days), and no further however often it runs.
    await h.pool.query("UPDATE upkeep_marks SET at = '-infinity' WHERE name = 'open_messages'");
    const held = await h.pool.query<{ currency: string; held: number }>(
      `SELECT charge_currency AS currency, sum(charge)::float8 AS held FROM messages
        WHERE billing = 'held' GROUP BY charge_currency`,
    );
    expect(held.rows.length).toBe(1);
    for (let i = 0; i < 3; i++) expect((await sampleOpenMessages(h.pool)).held).toEqual(held.rows);
    const oldest = await h.pool.query<{ at: Date; operator: string }>(
      `SELECT COALESCE(send_at, received_at) AS at, operator FROM messages
        WHERE status NOT IN ('success', 'failed') ORDER BY 1 LIMIT 1`,
    );
    const at = oldest.rows[0]?.at as Date;
    expect((await openMark(h.pool)).getTime()).toBe(at.getTime());
    // The oldest open message's age, for its operator: the stalled-message gauge.
    const age = (await sampleOpenMessages(h.pool)).oldestSeconds.find(
      (o) => o.operator === oldest.rows[0]?.operator,
    );
    expect(age?.seconds).toBeGreaterThanOrEqual((Date.now() - at.getTime()) / 1000 - 5);
  });
});

describe("the open-messages watermark and scheduled sends", () => {
  it("a message scheduled weeks ahead never holds the watermark back, and its charge is still sampled", async () => {
    const t = await startTestService({}, "api");
    try {
      const acct = await t.account();
      const sendAt = new Date(Date.now() + 5 * 86_400_000).toISOString();
      const res = await call(t.base, "POST", "/api/v1/sms", {
        headers: acct.headers,
        body: { to: "+263771234567", from: "SHIRI", message: "later", send_at: sendAt },
      });
      expect(res.status).toBe(202);
      // Accepted 25 days before it is due: by received_at it would hold the mark back 25 days.
      await t.service.pool.query("UPDATE messages SET received_at = now() - interval '25 days'");
      await t.service.pool.query("UPDATE upkeep_marks SET at = '-infinity' WHERE name = 'open_messages'");
      // Not due for five days: held, but no operator has a stalled message.
      expect(await sampleOpenMessages(t.service.pool)).toEqual({
        held: [{ currency: "USD", held: 450 }],
        oldestSeconds: [],
      });
      const mark = await openMark(t.service.pool);
      expect(Date.now() - mark.getTime()).toBeLessThan(5 * 60_000);
      // Sampled again from the moved mark, the scheduled message's charge is still there.
      expect((await sampleOpenMessages(t.service.pool)).held).toEqual([{ currency: "USD", held: 450 }]);
    } finally {
      await t.stop();
    }
  });
});

describe("the worker's retention pass", () => {
  it("runs by itself every RETENTION_INTERVAL_MS", async () => {
    const t = await startTestService({ RETENTION_INTERVAL_MS: "100", START_SIMULATORS: "false" }, "worker");
    try {
      await t.service.pool.query(
        `INSERT INTO mobile_originated (operator, source_addr, source_addr_ton, source_addr_npi, destination_addr,
                                        esm_class, data_coding, body, received_at)
         VALUES ('netone', '263710000001', 1, 1, 'SHIRI', 0, 0, 'old', now() - interval '91 days')`,
      );
      await waitFor(
        async () =>
          (await t.service.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM mobile_originated"))
            .rows[0]?.n === 0,
        { timeoutMs: 10_000, what: "the old mobile-originated message deleted by the worker" },
      );
    } finally {
      await t.stop();
    }
  });
});
