import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort as closedPort } from "../../bench/lib/shiri-process.ts";
import { type Receiver, startReceiver } from "../integration/webhooks-receiver.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * Issue 28, item 4: callbacks cannot be turned on a stranger. A receiver on loopback answers 410;
 * the account's callbacks to its URL stop (a send naming it again does not resume them), redelivery
 * revives none of what the 410 ended, and only the account's PUT /api/v1/webhook of the URL resumes
 * it. The whole service runs (role "all"); its carriers point at a closed port, so the only events
 * are the message.enqueued ones recorded at each send.
 */
let t: TestService;
let owner: TestAccount;
let other: TestAccount;
let rx: Receiver;
let answer = 410;

beforeAll(async () => {
  const port = String(await closedPort());
  const smpp = Object.fromEntries(
    ["ECONET", "NETONE", "TELECEL"].flatMap((op) => [
      [`SMPP_${op}_HOST`, "127.0.0.1"],
      [`SMPP_${op}_PORT`, port],
    ]),
  );
  t = await startTestService({ ...smpp, WEBHOOK_POLL_MS: "20", WEBHOOK_RETRY_BASE_MS: "50" }, "all");
  owner = await t.account();
  other = await t.account();
  rx = await startReceiver(() => answer);
});
afterAll(async () => {
  await rx.stop();
  await t.stop();
});

const api = (account: TestAccount, method: string, path: string, body?: unknown) =>
  call(t.base, method, `/api/v1${path}`, {
    headers: account.headers,
    ...(body === undefined ? {} : { body }),
  });

interface Event {
  id: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  ended_by_gone: boolean;
}

/** A bulk send of n messages whose callbacks go to `url`: its events, once each has settled. */
async function sendAndSettle(account: TestAccount, n: number, url = rx.url): Promise<Event[]> {
  const res = await api(account, "POST", "/sms/bulk", {
    to: Array.from({ length: n }, (_, i) => `+26377${String(3_000_000 + i)}`),
    from: "SHIRI",
    message: "x",
    webhook_url: url,
  });
  expect(res.status).toBe(202);
  const messages = (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
  const events = async () =>
    (
      await t.service.pool.query<Event>(
        `SELECT id, state, attempts, last_status, last_error, ended_by_gone FROM webhook_events
          WHERE message_id = ANY ($1) ORDER BY last_attempt_at NULLS LAST, id`,
        [messages],
      )
    ).rows;
  await waitFor(async () => (await events()).filter((e) => e.state !== "pending").length === n, {
    what: `${n} events settled`,
  });
  return events();
}

const range = () => ({
  since: new Date(Date.now() - 3_600_000).toISOString(),
  until: new Date(Date.now() + 60_000).toISOString(),
});

describe("a receiver that answers 410 Gone", () => {
  let gone: Event[];

  it("gets one request: the event fails for good and the account's other events to the URL are not sent", async () => {
    gone = await sendAndSettle(owner, 3);
    expect(rx.received).toHaveLength(1);
    const [refused, ...notSent] = gone;
    expect(refused).toMatchObject({ state: "failed", attempts: 1, last_status: 410, ended_by_gone: true });
    for (const e of notSent) {
      expect(e).toMatchObject({ state: "failed", attempts: 0, last_status: null, ended_by_gone: true });
      expect(e.last_error).toMatch(
        /answered 410 Gone at .*until the account sets it again with PUT \/api\/v1\/webhook/,
      );
    }
  });

  it("is not sent to again when a send names its URL again", async () => {
    const again = await sendAndSettle(owner, 2);
    expect(again.every((e) => e.state === "failed" && e.attempts === 0 && e.ended_by_gone)).toBe(true);
    expect(rx.received).toHaveLength(1);
  });

  it("never has what the 410 ended redelivered: a range skips it, one by id is a 409", async () => {
    const res = await api(owner, "POST", "/webhook/deliveries/redeliver", range());
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ data: { redelivered: 0 } });
    const one = await api(owner, "POST", `/webhook/deliveries/${gone[0]?.id}/redeliver`);
    expect(one.status).toBe(409);
    expect(one.body).toEqual({
      status: "error",
      message: "refused by the receiver",
      error: {
        code: "CONFLICT",
        description: "the receiver answered 410 Gone to this event's URL: the event is never sent again",
      },
    });
    const { rows } = await t.service.pool.query<{ state: string }>(
      "SELECT DISTINCT state FROM webhook_events WHERE account_id = $1",
      [owner.id],
    );
    expect(rows).toEqual([{ state: "failed" }]);
    expect(rx.received).toHaveLength(1);
  });

  it("stops the URL for that account only", async () => {
    answer = 200;
    const others = await sendAndSettle(other, 1);
    expect(others).toMatchObject([{ state: "delivered", last_status: 200 }]);
    const owners = await sendAndSettle(owner, 1);
    expect(owners).toMatchObject([{ state: "failed", attempts: 0, ended_by_gone: true }]);
    expect(rx.received).toHaveLength(2);
  });

  it("is sent to again once the account sets the URL with PUT /api/v1/webhook, old events still ended", async () => {
    const put = await api(owner, "PUT", "/webhook", { url: rx.url });
    expect(put.status).toBe(200);
    const resumed = await sendAndSettle(owner, 2);
    expect(resumed.every((e) => e.state === "delivered")).toBe(true);
    expect(rx.received).toHaveLength(4);
    // Redelivery takes the two delivered events, and still none the 410 ended.
    const res = await api(owner, "POST", "/webhook/deliveries/redeliver", range());
    expect(res.body).toMatchObject({ data: { redelivered: 2 } });
    const one = await api(owner, "POST", `/webhook/deliveries/${gone[1]?.id}/redeliver`);
    expect(one.status).toBe(409);
    await waitFor(() => rx.received.length === 6, { what: "the two redelivered events" });
  });
});

describe("redelivery, per account and hour, across API processes", () => {
  let api1: TestService;
  let second: { base: string; stop(): Promise<void> };
  let a: TestAccount;
  let b: TestAccount;

  beforeAll(async () => {
    // API processes only: no worker sends anything, so every event stays in the outbox.
    api1 = await startTestService({ WEBHOOK_REDELIVERIES_PER_HOUR: "10" });
    second = await api1.startAnother();
    a = await api1.account();
    b = await api1.account();
  });
  afterAll(async () => {
    await api1.stop();
  });

  const post = (base: string, account: TestAccount, path: string, body?: unknown) =>
    call(base, "POST", `/api/v1${path}`, {
      headers: account.headers,
      ...(body === undefined ? {} : { body }),
    });

  async function eventsOf(account: TestAccount, n: number): Promise<string[]> {
    const res = await post(api1.base, account, "/sms/bulk", {
      to: Array.from({ length: n }, (_, i) => `+26377${String(4_000_000 + i)}`),
      from: "SHIRI",
      message: "x",
      webhook_url: "https://hooks.example.com/sms",
    });
    const ids = (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    const { rows } = await api1.service.pool.query<{ id: string }>(
      "SELECT id FROM webhook_events WHERE message_id = ANY ($1) ORDER BY id",
      [ids],
    );
    return rows.map((r) => r.id);
  }

  it("shares one budget between processes and answers 429 with Retry-After past it, redelivering nothing", async () => {
    const ids = await eventsOf(a, 8);
    expect((await post(api1.base, a, "/webhook/deliveries/redeliver", range())).body).toMatchObject({
      data: { redelivered: 8 },
    });
    expect((await post(second.base, a, `/webhook/deliveries/${ids[0]}/redeliver`)).status).toBe(202);
    expect((await post(api1.base, a, `/webhook/deliveries/${ids[1]}/redeliver`)).status).toBe(202);
    const before = (
      await api1.service.pool.query<{ next_attempt_at: Date }>(
        "SELECT next_attempt_at FROM webhook_events WHERE id = $1",
        [ids[2]],
      )
    ).rows[0];
    const refused = await post(second.base, a, `/webhook/deliveries/${ids[2]}/redeliver`);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ status: "error", error: { code: "TOO_MANY_REQUESTS" } });
    // An hour's budget of 10 refills one event every 360 s.
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(300);
    expect(retryAfter).toBeLessThanOrEqual(360);
    const after = (
      await api1.service.pool.query<{ next_attempt_at: Date }>(
        "SELECT next_attempt_at FROM webhook_events WHERE id = $1",
        [ids[2]],
      )
    ).rows[0];
    expect(after).toEqual(before);
    const rangeRefused = await post(api1.base, a, "/webhook/deliveries/redeliver", range());
    expect(rangeRefused.status).toBe(429);
  });

  it("refuses a range larger than the whole hourly budget, to be split", async () => {
    await eventsOf(b, 11);
    const res = await post(second.base, b, "/webhook/deliveries/redeliver", range());
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: {
        code: "VALIDATION_ERROR",
        validation_errors: [
          {
            field: "until",
            description: "the range holds more than 10 events, the hourly redelivery limit: split it",
          },
        ],
      },
    });
  });

  it("after the limit was lowered, a bucket filled under the old one refills within the hour", async () => {
    const c = await api1.account();
    const [id] = await eventsOf(c, 1);
    // As a bucket that took 113 redeliveries under a larger limit, before a restart with 10.
    await api1.service.pool.query(
      "INSERT INTO webhook_redelivery_budget (account_id, level, at) VALUES ($1, 113, now())",
      [c.id],
    );
    const refused = await post(api1.base, c, `/webhook/deliveries/${id}/redeliver`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(360);
  });

  it("keeps each account's budget its own", async () => {
    const [id] = await eventsOf(b, 1);
    expect((await post(api1.base, b, `/webhook/deliveries/${id}/redeliver`)).status).toBe(202);
  });
});
