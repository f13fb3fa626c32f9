import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WEBHOOK_QUEUE } from "../../src/queue/webhook-jobs.ts";
import { RETIRED_SECRETS_KEPT } from "../../src/webhooks/account-webhooks.ts";
import { verifySignature } from "../../src/webhooks/signing.ts";
import { type DispatchHarness, startDispatchHarness } from "../support/dispatch.ts";
import { call } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";
import { settledEvents } from "../support/webhook-events.ts";
import { type Answer, type Received, type Receiver, startReceiver } from "./webhooks-receiver.ts";

/**
 * Callbacks through the whole service (API, dispatch to the carrier simulators, receipts,
 * webhook worker) to real HTTP receivers on loopback.
 */
const PER_HOST = 3;
let h: DispatchHarness;
const receivers: Receiver[] = [];
let secret: string;

/** Receivers answer what the test in progress says; each test gets its own receiver(s). */
async function receiver(answer?: (r: Received, attempt: number) => Answer): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

beforeAll(async () => {
  h = await startDispatchHarness({
    behaviour: { telecel: { outcomes: { UNDELIV: 1 } } },
    env: {
      WEBHOOK_POLL_MS: "20",
      WEBHOOK_RETRY_BASE_MS: "50",
      WEBHOOK_RETRY_MAX_DELAY_MS: "200",
      WEBHOOK_CONCURRENCY_PER_HOST: String(PER_HOST),
      // Long enough that the hung receiver visibly holds its requests for the whole isolation test.
      WEBHOOK_TIMEOUT_MS: "10000",
      // The stranded-event sweeper runs often here, so a stranded event comes back within the test.
      WEBHOOK_STRANDED_SWEEP_MS: "200",
    },
  });
  const res = await call(h.t.base, "POST", "/api/v1/webhook/secret", { headers: h.acct.headers });
  secret = (res.body as { data: { signing_secret: string } }).data.signing_secret;
});
afterAll(async () => {
  for (const r of receivers) await r.stop();
  await h.stop();
});

async function bulk(to: string[], message: string, webhookUrl?: string) {
  const res = await call(h.t.base, "POST", "/api/v1/sms/bulk", {
    headers: h.acct.headers,
    body: { to, from: "SHIRI", message, ...(webhookUrl ? { webhook_url: webhookUrl } : {}) },
  });
  expect(res.status).toBe(202);
  return (res.body as { data: { items: { id: string; operator: string }[] } }).data.items;
}

const types = (rs: Received[]) => rs.map((r) => r.event.type).sort();

type Verify = (body: string, header: unknown, secret: string) => boolean;
/** The documented Node.js verification snippet (docs/api.md), imported as a receiver would. */
async function documentedVerifier(): Promise<Verify> {
  const snippet = new URL("../../docs/webhook-verification/verify.mjs", import.meta.url).href;
  return ((await import(snippet)) as { verifyShiriSignature: Verify }).verifyShiriSignature;
}

/** The events of these messages, once each is settled (delivered or failed). */
const settledRows = (messageIds: string[], count: number) => settledEvents(h.pool, messageIds, count);
const phone = (prefix: string, i: number) => `+263${prefix}${String(1_000_000 + i).slice(1)}`;

describe("callbacks for a bulk send", () => {
  it("every message produces its events: enqueued, success, then delivered or undelivered; unroutable ones fail at once", async () => {
    const rx = await receiver();
    const to = [
      ...Array.from({ length: 20 }, (_, i) => phone("771", i)),
      ...Array.from({ length: 10 }, (_, i) => phone("711", i)),
      ...Array.from({ length: 10 }, (_, i) => phone("731", i)), // telecel: receipts say UNDELIV
      "12345",
    ];
    const items = await bulk(to, "every one", rx.url);
    const expected = new Map<string, string[]>();
    for (const item of items) {
      expected.set(
        item.id,
        item.operator === ""
          ? ["message.failed"]
          : item.operator === "telecel"
            ? ["message.enqueued", "message.success", "message.undelivered"]
            : ["message.delivered", "message.enqueued", "message.success"],
      );
    }
    const total = [...expected.values()].reduce((n, v) => n + v.length, 0);
    await waitFor(() => rx.received.length >= total, { timeoutMs: 30_000, what: `${total} callbacks` });
    for (const [id, want] of expected) expect(types(rx.forMessage(id))).toEqual(want);
    expect(new Set(rx.received.map((r) => r.event.id)).size).toBe(total);

    // Each event shows the message as the change left it.
    const econet = items.find((i) => i.operator === "econet")?.id ?? "";
    const byType = new Map(rx.forMessage(econet).map((r) => [r.event.type, r.event.data]));
    expect(byType.get("message.enqueued")).toMatchObject({ status: "enqueued", delivered_at: null });
    expect(byType.get("message.success")).toMatchObject({ status: "success" });
    const delivered = byType.get("message.delivered");
    expect(delivered?.delivered_at).toEqual(expect.any(String));
    const unroutable = rx.forMessage(items.at(-1)?.id ?? "")[0]?.event.data;
    expect(unroutable).toMatchObject({ status: "failed", operator_response: "UNROUTABLE" });
    const telecel = items.find((i) => i.operator === "telecel")?.id ?? "";
    const undelivered = rx.forMessage(telecel).find((r) => r.event.type === "message.undelivered");
    expect(undelivered?.event.data).toMatchObject({
      operator_response: expect.stringMatching(/^UNDELIV( err:\d+)?$/),
      delivered_at: null,
    });

    // The last event of a message is the message as GET shows it now.
    const res = await call(h.t.base, "GET", `/api/v1/sms/${econet}`, { headers: h.acct.headers });
    expect(delivered).toEqual((res.body as { data: unknown }).data);
  });

  it("signs every callback so that the documented Node.js snippet verifies it, and only with the right secret", async () => {
    const rx = await receiver();
    await bulk([phone("772", 1), phone("712", 1)], "signed", rx.url);
    await waitFor(() => rx.received.length >= 2, { what: "two callbacks" });

    const verifyShiriSignature = await documentedVerifier();
    for (const r of rx.received) {
      const header = r.headers["shiri-signature"];
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(r.headers["shiri-event-id"]).toBe(r.event.id);
      expect(r.headers["shiri-event-type"]).toBe(r.event.type);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(verifyShiriSignature(r.body, header, secret)).toBe(true);
      expect(verifyShiriSignature(`${r.body} `, header, secret)).toBe(false);
      expect(verifyShiriSignature(r.body, header, `${secret}x`)).toBe(false);
      const stale = String(header).replace(/^t=(\d+)/, (_, t) => `t=${Number(t) - 301}`);
      expect(verifyShiriSignature(r.body, stale, secret)).toBe(false);
    }
  });

  it("after a rotation, signs with the new and the old secret for the grace period, then with the new one only", async () => {
    const a = await h.t.account({ balance: 10_000_000 });
    const rotate = async () =>
      (
        (await call(h.t.base, "POST", "/api/v1/webhook/secret", { headers: a.headers })).body as {
          data: { signing_secret: string };
        }
      ).data.signing_secret;
    const oldest = await rotate();
    const oldSecret = await rotate();
    const newSecret = await rotate();
    const rx = await receiver();
    const sendOne = async (to: string) => {
      const res = await call(h.t.base, "POST", "/api/v1/sms", {
        headers: a.headers,
        body: {
          to,
          from: "SHIRI",
          message: "rotated",
          webhook_url: rx.url,
          webhook_events: ["message.enqueued"],
        },
      });
      expect(res.status).toBe(202);
      const id = (res.body as { id: string }).id;
      await waitFor(() => rx.forMessage(id).length === 1, { timeoutMs: 30_000, what: "the callback" });
      return rx.forMessage(id)[0] as Received;
    };
    const verify = await documentedVerifier();

    const during = await sendOne(phone("781", 1));
    const header = String(during.headers["shiri-signature"]);
    // Each secret a rotation replaced signs too, newest first: before, the second rotation
    // stopped the first secret signing at once.
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verify(during.body, header, newSecret)).toBe(true);
    expect(verify(during.body, header, oldSecret)).toBe(true); // a receiver not yet redeployed
    expect(verify(during.body, header, oldest)).toBe(true); // nor one a rotation before that
    expect(verify(during.body, header, secret)).toBe(false);
    expect(verifySignature(oldSecret, during.body, header)).toBe(true);

    // The grace period (24 h) over: only the new secret signs.
    await h.pool.query(
      "UPDATE webhook_retired_secrets SET replaced_at = replaced_at - interval '25 hours' WHERE account_id = $1",
      [a.id],
    );
    await h.pool.query(
      "UPDATE account_webhooks SET previous_secret_replaced_at = now() - interval '25 hours' WHERE account_id = $1",
      [a.id],
    );
    const after = await sendOne(phone("781", 2));
    const single = String(after.headers["shiri-signature"]);
    expect(single).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verify(after.body, single, newSecret)).toBe(true);
    expect(verify(after.body, single, oldSecret)).toBe(false);

    // A rotation by a process of the version before writes the replaced secret to
    // account_webhooks alone: it signs too, for its grace period.
    const olderVersion = "whsec_rotated_by_the_version_before";
    await h.pool.query(
      "UPDATE account_webhooks SET previous_signing_secret = $2, previous_secret_replaced_at = now() WHERE account_id = $1",
      [a.id, olderVersion],
    );
    const mixed = await sendOne(phone("781", 3));
    const both = String(mixed.headers["shiri-signature"]);
    expect(verify(mixed.body, both, newSecret)).toBe(true);
    expect(verify(mixed.body, both, olderVersion)).toBe(true);

    // However often it is rotated, the last RETIRED_SECRETS_KEPT replaced secrets are what is kept.
    for (let i = 0; i < RETIRED_SECRETS_KEPT + 2; i++) await rotate();
    const kept = await h.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_retired_secrets WHERE account_id = $1",
      [a.id],
    );
    expect(kept.rows[0]?.n).toBe(RETIRED_SECRETS_KEPT);
  });
});

describe("retries", () => {
  it("a receiver answering 500 twice then 200 gets each event three times with the same id, then no more", async () => {
    const rx = await receiver((_r, attempt) => (attempt <= 2 ? 500 : 200));
    const [item] = await bulk([phone("773", 1)], "third time lucky", rx.url);
    const id = item?.id ?? "";
    // enqueued, success and delivered: each answered 500, 500, 200.
    await waitFor(
      async () => {
        const { rows } = await h.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook_events WHERE message_id = $1 AND state = 'delivered'",
          [id],
        );
        return rows[0]?.n === 3;
      },
      { timeoutMs: 30_000, what: "three events delivered" },
    );
    const { rows } = await h.pool.query(
      "SELECT id, attempts, last_status, last_error FROM webhook_events WHERE message_id = $1",
      [id],
    );
    for (const row of rows) {
      expect(row).toMatchObject({ attempts: 3, last_status: 200, last_error: null });
      const seen = rx.received.filter((r) => r.event.id === row.id);
      expect(seen).toHaveLength(3);
      expect(new Set(seen.map((s) => s.body)).size).toBe(1); // the same event, byte for byte
    }
    // Nothing is left to send them again: no due event and no queued job.
    const due = await h.pool.query(
      "SELECT 1 FROM webhook_events WHERE message_id = $1 AND enqueued_at IS NULL",
      [id],
    );
    expect(due.rowCount).toBe(0);
    const jobs = await h.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pgboss.job
        WHERE name = $1 AND state < 'completed' AND data->>'eventId' = ANY ($2::text[])`,
      [WEBHOOK_QUEUE, rows.map((r) => r.id)],
    );
    expect(jobs.rows[0]?.n).toBe(0);
    expect(rx.forMessage(id)).toHaveLength(9);
  });

  it("retries a receiver mid-deploy (404, then 401, then 200): every event is delivered, none lost", async () => {
    const rx = await receiver((_r, attempt) => (attempt === 1 ? 404 : attempt === 2 ? 401 : 200));
    const [item] = await bulk([phone("783", 1)], "mid-deploy", rx.url);
    const id = item?.id ?? "";
    await h.waitUntilSettled([id], { delivered: true });
    const rows = await settledRows([id], 3);
    for (const row of rows) expect(row).toMatchObject({ state: "delivered", attempts: 3, last_status: 200 });
    for (const row of rows)
      expect(rx.received.filter((r) => r.event.id === row.id).map((r) => r.event.type)).toHaveLength(3);
  });

  it("does not retry 410 Gone: a sent event fails after one attempt, and the URL's later events are not sent", async () => {
    const counted = async (outcome: string) =>
      (await h.t.service.metrics.webhookDeliveries.get()).values.find((v) => v.labels.outcome === outcome)
        ?.value ?? 0;
    const before = { failed: await counted("failed"), stopped: await counted("stopped") };
    const rx = await receiver(() => 410);
    // A message's three events once each is settled, as (attempts, last_status, state).
    const eventsOf = async (messageId: string) =>
      (await settledRows([messageId], 3)).map(({ attempts, last_status, state }) => ({
        attempts,
        last_status,
        state,
      }));
    const notSent = { attempts: 0, last_status: null, state: "failed" };

    const [first] = await bulk([phone("774", 1)], "gone", rx.url);
    const firstId = first?.id ?? "";
    // Its first callback is answered 410 and ends its event, never retried. Its other events fail
    // without a request, unless their job had already read the stop list when the 410 came.
    const firstRows = await eventsOf(firstId);
    const sent = firstRows.filter((e) => e.attempts > 0);
    expect(sent.length).toBeGreaterThanOrEqual(1);
    for (const e of sent) expect(e).toEqual({ attempts: 1, last_status: 410, state: "failed" });
    for (const e of firstRows.filter((row) => row.attempts === 0)) expect(e).toEqual(notSent);
    expect(rx.forMessage(firstId)).toHaveLength(sent.length);

    // The 410 stopped the account's callbacks to the URL (docs/decisions/0004): a later message's
    // events fail without a request.
    const [later] = await bulk([phone("774", 2)], "gone again", rx.url);
    const laterId = later?.id ?? "";
    expect(await eventsOf(laterId)).toEqual([notSent, notSent, notSent]);
    expect(rx.forMessage(laterId)).toHaveLength(0);
    expect((await counted("failed")) - before.failed).toBe(sent.length);
    expect((await counted("stopped")) - before.stopped).toBe(6 - sent.length);
  });
});

describe("isolation", () => {
  it("a receiver that hangs holds only its own slots: other sends' callbacks and dispatch go on", async () => {
    const hung = await receiver(() => "hang");
    const fine = await receiver();
    const stuck = await bulk(
      Array.from({ length: 30 }, (_, i) => phone("775", i)),
      "to a dead end",
      hung.url,
    );
    await waitFor(() => hung.open() === PER_HOST, { what: "the hung receiver to hold its share" });

    const ok = await bulk([phone("715", 1), phone("775", 99)], "still flowing", fine.url);
    // Both messages of the second send are dispatched, delivered and called back while every
    // request to the hung receiver is still open and none has been answered.
    await waitFor(() => fine.received.length >= 6, { timeoutMs: 4_000, what: "the other send's callbacks" });
    expect(types(fine.received)).toHaveLength(6);
    // Still held, and no other request came: the first ones have not even timed out (10 s).
    expect(hung.open()).toBe(PER_HOST);
    expect(hung.received).toHaveLength(PER_HOST);
    expect(hung.maxOpen()).toBe(PER_HOST); // the per-host bound held
    await h.waitUntilSettled(
      stuck.map((i) => i.id),
      { delivered: true },
    );
    expect(ok).toHaveLength(2);
  });
});

describe("the account webhook", () => {
  it("receives the events of sends without a webhook_url, single sends included", async () => {
    const rx = await receiver();
    const put = await call(h.t.base, "PUT", "/api/v1/webhook", {
      headers: h.acct.headers,
      body: { url: rx.url },
    });
    expect(put.status).toBe(200);
    const single = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      body: { to: "+263776000001", from: "SHIRI", message: "to the account hook" },
    });
    const sent = single.body as { id: string };
    const [item] = await bulk([phone("716", 1)], "bulk to the account hook");
    await waitFor(() => rx.forMessage(sent.id).length === 3 && rx.forMessage(item?.id ?? "").length === 3, {
      timeoutMs: 30_000,
      what: "both messages' callbacks",
    });
    const enqueued = rx.forMessage(sent.id).find((r) => r.event.type === "message.enqueued");
    expect(enqueued?.event.data).toEqual(single.body); // the 202 answer, field for field
    const del = await call(h.t.base, "DELETE", "/api/v1/webhook", { headers: h.acct.headers });
    expect(del.status).toBe(200);
  });
});

describe("the events a webhook asks for", () => {
  /** The stored events of these messages: [message id, type, state], once none is pending. */
  async function settledEvents(ids: string[]) {
    let rows: Array<{ message_id: string; type: string; state: string }> = [];
    await waitFor(
      async () => {
        ({ rows } = await h.pool.query(
          "SELECT message_id, type, state FROM webhook_events WHERE message_id = ANY ($1) ORDER BY message_id, type",
          [ids],
        ));
        return rows.every((r) => r.state !== "pending");
      },
      { timeoutMs: 30_000, what: "every event settled" },
    );
    return rows;
  }

  it("a single send's own webhook_url gets every event, signed with the account's secret", async () => {
    const rx = await receiver();
    const res = await call(h.t.base, "POST", "/api/v1/sms", {
      headers: h.acct.headers,
      body: { to: phone("776", 2), from: "SHIRI", message: "single, own hook", webhook_url: rx.url },
    });
    expect(res.status).toBe(202);
    const id = (res.body as { id: string }).id;
    await waitFor(() => rx.forMessage(id).length >= 3, { timeoutMs: 30_000, what: "three callbacks" });
    expect(types(rx.forMessage(id))).toEqual(["message.delivered", "message.enqueued", "message.success"]);
    for (const r of rx.forMessage(id)) {
      expect(verifySignature(secret, r.body, String(r.headers["shiri-signature"]))).toBe(true);
      expect(r.headers["shiri-event-type"]).toBe(r.event.type);
    }
    const enqueued = rx.forMessage(id).find((r) => r.event.type === "message.enqueued");
    expect(enqueued?.event.data).toEqual(res.body);
    expect((await settledEvents([id])).every((e) => e.state === "delivered")).toBe(true);
  });

  it("an account webhook that wants delivered only receives one callback per message and nothing else", async () => {
    const a = await h.t.account({ balance: 10_000_000 });
    const rx = await receiver();
    const put = await call(h.t.base, "PUT", "/api/v1/webhook", {
      headers: a.headers,
      body: { url: rx.url, events: ["message.delivered"] },
    });
    expect(put.status).toBe(200);
    const accountSecret = (put.body as { data: { signing_secret: string } }).data.signing_secret;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const single = await call(h.t.base, "POST", "/api/v1/sms", {
        headers: a.headers,
        body: { to: phone("777", i), from: "SHIRI", message: "delivered only" },
      });
      ids.push((single.body as { id: string }).id);
    }
    const bulkRes = await call(h.t.base, "POST", "/api/v1/sms/bulk", {
      headers: a.headers,
      body: { to: [phone("717", 1), phone("778", 1), "12345"], from: "SHIRI", message: "delivered only" },
    });
    const bulkIds = (bulkRes.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    const unroutable = bulkIds.pop() ?? "";
    ids.push(...bulkIds);
    await h.waitUntilSettled(ids, { delivered: true });
    await waitFor(() => rx.received.length >= ids.length, { timeoutMs: 30_000, what: "delivered callbacks" });

    const events = await settledEvents([...ids, unroutable]);
    expect(events.map((e) => [e.message_id, e.type, e.state])).toEqual(
      ids.map((id) => [id, "message.delivered", "delivered"]).sort(),
    );
    expect(rx.received).toHaveLength(ids.length);
    for (const r of rx.received) {
      expect(r.event.type).toBe("message.delivered");
      expect(verifySignature(accountSecret, r.body, String(r.headers["shiri-signature"]))).toBe(true);
    }
    expect(new Set(rx.received.map((r) => r.event.data.id))).toEqual(new Set(ids));
    // Recorded by the worker's status changes, each event was in a job from its first instant
    // (src/events/event-jobs.ts), not picked up by the relay afterwards.
    const { rows } = await h.pool.query<{ born_carried: boolean }>(
      "SELECT enqueued_at = created_at AS born_carried FROM webhook_events WHERE message_id = ANY ($1)",
      [ids],
    );
    expect(rows.map((r) => r.born_carried)).toEqual(ids.map(() => true));
  });

  it("a bulk send's webhook_events narrows its own callbacks: final outcomes that are not delivery", async () => {
    const rx = await receiver();
    const res = await call(h.t.base, "POST", "/api/v1/sms/bulk", {
      headers: h.acct.headers,
      body: {
        to: [phone("779", 1), phone("732", 1), "12345"], // econet delivers, telecel UNDELIV, unroutable
        from: "SHIRI",
        message: "bad news only",
        webhook_url: rx.url,
        webhook_events: ["message.undelivered", "message.failed"],
      },
    });
    expect(res.status).toBe(202);
    const [econet, telecel, unroutable] = (res.body as { data: { items: { id: string }[] } }).data.items.map(
      (i) => i.id,
    );
    await h.waitUntilSettled([econet ?? "", telecel ?? ""], { delivered: true });
    await waitFor(() => rx.received.length >= 2, { timeoutMs: 30_000, what: "two callbacks" });
    const events = await settledEvents([econet ?? "", telecel ?? "", unroutable ?? ""]);
    expect(events.map((e) => [e.message_id, e.type]).sort()).toEqual(
      [
        [telecel, "message.undelivered"],
        [unroutable, "message.failed"],
      ].sort(),
    );
    expect(rx.received.map((r) => [r.event.data.id, r.event.type]).sort()).toEqual(
      [
        [telecel, "message.undelivered"],
        [unroutable, "message.failed"],
      ].sort(),
    );
  });
});

describe("callbacks are not lost", () => {
  it("an event whose job was lost is found by the worker's sweeper and delivered", async () => {
    const rx = await receiver();
    const [item] = await bulk([phone("784", 1)], "stranded", rx.url);
    const id = item?.id ?? "";
    await h.waitUntilSettled([id], { delivered: true });
    const [stranded] = await settledRows([id], 3);
    // As if its job had been taken by a worker that died, and used up its retries: the event is
    // pending, marked as carried by a job since long ago, and no live job carries it.
    await h.pool.query(
      `UPDATE webhook_events SET state = 'pending', completed_at = NULL, enqueued_at = now() - interval '1 hour'
        WHERE id = $1`,
      [stranded?.id],
    );
    await waitFor(() => rx.received.filter((r) => r.event.id === stranded?.id).length === 2, {
      timeoutMs: 30_000,
      what: "the stranded event sent again",
    });
    const rows = await settledRows([id], 3);
    expect(rows.find((r) => r.id === stranded?.id)).toMatchObject({ state: "delivered", attempts: 2 });
    const requeued = (await h.t.service.metrics.webhookRequeued.get()).values.find(
      (v) => v.labels.reason === "stranded",
    );
    expect(requeued?.value).toBeGreaterThanOrEqual(1);
  });

  it("redelivers an event on request, and every event of a time range, as new attempts", async () => {
    // Delivered ones: redelivery takes any state but what a 410 ended (test/security).
    const rx = await receiver(() => 200);
    const [item] = await bulk([phone("785", 1)], "redeliver me", rx.url);
    const id = item?.id ?? "";
    await h.waitUntilSettled([id], { delivered: true });
    const delivered = await settledRows([id], 3);
    expect(delivered.every((r) => r.state === "delivered" && r.attempts === 1)).toBe(true);

    const one = delivered[0]?.id ?? "";
    const res = await call(h.t.base, "POST", `/api/v1/webhook/deliveries/${one}/redeliver`, {
      headers: h.acct.headers,
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "success", data: { id: one, state: "pending", attempts: 1 } });
    await waitFor(() => rx.received.filter((r) => r.event.id === one).length === 2, {
      what: "the redelivered event",
    });
    expect((await settledRows([id], 3)).find((r) => r.id === one)).toMatchObject({
      state: "delivered",
      attempts: 2,
    });

    const created = await h.pool.query<{ since: Date; until: Date }>(
      "SELECT min(created_at) AS since, max(created_at) + interval '1 ms' AS until FROM webhook_events WHERE message_id = $1",
      [id],
    );
    const range = created.rows[0];
    const many = await call(h.t.base, "POST", "/api/v1/webhook/deliveries/redeliver", {
      headers: h.acct.headers,
      body: { since: range?.since.toISOString(), until: range?.until.toISOString() },
    });
    expect(many.status).toBe(202);
    expect(many.body).toEqual({
      status: "success",
      message: "redelivery scheduled",
      data: { redelivered: 3 },
    });
    const rows = await settledRows([id], 3);
    await waitFor(() => rx.forMessage(id).length === 3 + 1 + 3, { what: "every event of the range again" });
    for (const row of rows) expect(row).toMatchObject({ state: "delivered", last_status: 200 });
    expect(rows.map((r) => r.attempts).sort()).toEqual([2, 2, 3]);
  });
});
