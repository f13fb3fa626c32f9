import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setSendDefaults } from "../../src/accounts/send-defaults.ts";
import { withTransaction } from "../../src/db/pool.ts";
import { expireMessages } from "../../src/lifecycle/index.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * Issue 30's send options through the API (no carrier here: test/integration/send-options-dispatch
 * takes them to one): smart encoding and what it is charged, a validity per message and how it
 * expires, delivery windows and the account's defaults, on the single and bulk sends and the
 * preview.
 */
let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t?.stop());

const ECONET = 450; // a segment
const send = (who: TestAccount, path: string, body: unknown) =>
  call(t.base, "POST", path, { headers: who.headers, body });
const available = async (who: TestAccount) => (await balanceNow(t.service.pool, who.id))?.available ?? -1;
const getSms = async (who: TestAccount, id: string) =>
  (await call(t.base, "GET", `/api/v1/sms/${id}`, { headers: who.headers })).body as {
    data: Record<string, unknown>;
  };

/** 150 characters with one curly apostrophe: 3 UCS-2 segments as written, 1 GSM-7 segment replaced. */
const WRITTEN = `We\u2019ll see you at 9 \u2013 bring your card.${" ".repeat(4)}${"x".repeat(108)}`;
const SENT = `We'll see you at 9 - bring your card.${" ".repeat(4)}${"x".repeat(108)}`;

describe("smart encoding", () => {
  it("charges the text as written without it (3 UCS-2 segments) and as sent with it (1 GSM-7)", async () => {
    const acct = await t.account({ balance: 100_000 });
    const plain = await send(acct, "/api/v1/sms", { to: "+263771234567", from: "SHIRI", message: WRITTEN });
    expect(plain.status).toBe(202);
    expect(plain.body).toMatchObject({ message: WRITTEN, charge: String(3 * ECONET) });
    expect(plain.body).not.toHaveProperty("smart_encoded");
    expect(await available(acct)).toBe(100_000 - 3 * ECONET);

    const smart = await send(acct, "/api/v1/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message: WRITTEN,
      smart_encoding: true,
    });
    expect(smart.status).toBe(202);
    expect(smart.body).toMatchObject({ message: SENT, charge: String(ECONET), smart_encoded: true });
    expect(await available(acct)).toBe(100_000 - 4 * ECONET);
    // Read back, the Message says what was sent and that it was replaced.
    const id = (smart.body as { id: string }).id;
    expect((await getSms(acct, id)).data).toMatchObject({ message: SENT, smart_encoded: true });
    const { rows } = await t.service.pool.query(
      "SELECT body, encoding, segments FROM messages WHERE id = $1",
      [id],
    );
    expect(rows[0]).toEqual({ body: SENT, encoding: "gsm7", segments: 1 });
  });

  it("leaves a text that stays UCS-2 anyway (an emoji) exactly as written", async () => {
    const acct = await t.account();
    const message = "Thanks \u2019\u{1F600}";
    const res = await send(acct, "/api/v1/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message,
      smart_encoding: true,
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ message, charge: String(ECONET) });
    expect(res.body).not.toHaveProperty("smart_encoded");
  });

  it("a bulk send is smart-encoded whole: data.smart_encoded, every recipient charged for the GSM-7 text", async () => {
    const acct = await t.account({ balance: 100_000 });
    const res = await send(acct, "/api/v1/sms/bulk", {
      to: ["+263771234567", "+263711234567"],
      from: "SHIRI",
      message: WRITTEN,
      smart_encoding: true,
    });
    expect(res.status).toBe(202);
    const data = (res.body as { data: { charge: number; smart_encoded: boolean; items: { id: string }[] } })
      .data;
    expect(data).toMatchObject({ charge: ECONET + 400, smart_encoded: true });
    for (const item of data.items)
      expect((await getSms(acct, item.id)).data).toMatchObject({ message: SENT, smart_encoded: true });
  });

  it("as the account's default, a send without the field is smart-encoded; smart_encoding false turns it off", async () => {
    const acct = await t.account();
    await setSendDefaults(t.service.pool, acct.id, { smartEncoding: true });
    const byDefault = await send(acct, "/api/v1/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message: WRITTEN,
    });
    expect(byDefault.body).toMatchObject({ message: SENT, charge: String(ECONET), smart_encoded: true });
    const off = await send(acct, "/api/v1/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message: WRITTEN,
      smart_encoding: false,
    });
    expect(off.body).toMatchObject({ message: WRITTEN, charge: String(3 * ECONET) });
  });

  it("the preview shows both prices, asked for or not, and which the send would pay", async () => {
    const acct = await t.account();
    const body = { to: ["+263771234567", "+263731234567"], from: "SHIRI", message: WRITTEN };
    const notAsked = await send(acct, "/api/v1/sms/preview", body);
    expect(notAsked.status).toBe(200);
    expect((notAsked.body as { data: unknown }).data).toMatchObject({
      charge: 3 * (ECONET + 380),
      encoding: "ucs2",
      segments: 3,
      smart_encoding: {
        applied: false,
        charge_as_written: 3 * (ECONET + 380),
        charge_smart_encoded: ECONET + 380,
        message: SENT,
      },
    });
    const asked = await send(acct, "/api/v1/sms/preview", { ...body, smart_encoding: true });
    expect((asked.body as { data: unknown }).data).toMatchObject({
      charge: ECONET + 380,
      encoding: "gsm7",
      segments: 1,
      smart_encoding: {
        applied: true,
        charge_as_written: 3 * (ECONET + 380),
        charge_smart_encoded: ECONET + 380,
      },
    });
    // Nothing to replace: no smart_encoding section.
    const plain = await send(acct, "/api/v1/sms/preview", { ...body, message: "plain" });
    expect((plain.body as { data: object }).data).not.toHaveProperty("smart_encoding");
  });

  it("is refused when it is not a boolean", async () => {
    const acct = await t.account();
    const res = await send(acct, "/api/v1/sms/bulk", {
      to: ["+263771234567"],
      from: "SHIRI",
      message: "x",
      smart_encoding: "yes",
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: { validation_errors: [{ field: "smart_encoding", description: "must be true or false" }] },
    });
  });
});

describe("validity_period", () => {
  it("is kept on the message with the expiry it gives, counted from acceptance or from send_at", async () => {
    const acct = await t.account();
    const before = Date.now();
    const res = await send(acct, "/api/v1/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message: "code 1234",
      validity_period: 300,
    });
    expect(res.status).toBe(202);
    const m = res.body as { id: string; validity_period: number; expires_at: string; received_at: string };
    expect(m.validity_period).toBe(300);
    expect(Date.parse(m.expires_at) - Date.parse(m.received_at)).toBe(300_000);
    expect(Date.parse(m.received_at)).toBeGreaterThanOrEqual(before - 1_000);
    expect((await getSms(acct, m.id)).data).toMatchObject({ validity_period: 300, expires_at: m.expires_at });

    const sendAt = new Date(Date.now() + 3_600_000);
    const bulk = await send(acct, "/api/v1/sms/bulk", {
      to: ["+263771234567"],
      from: "SHIRI",
      message: "later",
      send_at: sendAt.toISOString(),
      validity_period: 60,
    });
    expect((bulk.body as { data: object }).data).toMatchObject({
      send_at: sendAt.toISOString(),
      expires_at: new Date(sendAt.getTime() + 60_000).toISOString(),
    });
  });

  it("refuses a period under a minute, over three days, or not whole seconds", async () => {
    const acct = await t.account();
    for (const [value, description] of [
      [59, "must be at least 60 seconds"],
      [259_201, "must be at most 259200 seconds (3 days)"],
      [90.5, "must be a whole number of seconds"],
      ["600", "must be a whole number of seconds"],
    ] as const) {
      const res = await send(acct, "/api/v1/sms", {
        to: "+263771234567",
        from: "SHIRI",
        message: "x",
        validity_period: value,
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        status: "",
        error: { type: "ERR_BAD_REQUEST", validation_errors: [{ field: "validity_period", description }] },
      });
    }
    expect(await available(acct)).toBe(1_000_000);
  });

  it("past it, a message no carrier accepted fails EXPIRED, its hold released; without one, VALIDITY_EXPIRED", async () => {
    const acct = await t.account({ balance: 100_000 });
    const own = await send(acct, "/api/v1/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message: "expiring",
      validity_period: 60,
    });
    const plain = await send(acct, "/api/v1/sms", { to: "+263771234567", from: "SHIRI", message: "plain" });
    const ids = [(own.body as { id: string }).id, (plain.body as { id: string }).id];
    expect(await available(acct)).toBe(100_000 - 2 * ECONET);
    // No worker here: the sweeper's statement runs as the worker runs it, once the minute has passed
    // (moved back rather than waited for; test/integration/send-options-dispatch waits it for real).
    await t.service.pool.query(
      "UPDATE messages SET expires_at = now() - interval '1 second', received_at = now() - interval '2 days' WHERE id = $1",
      [ids[0]],
    );
    await t.service.pool.query("UPDATE messages SET received_at = now() - interval '2 days' WHERE id = $1", [
      ids[1],
    ]);
    const expired = await withTransaction(t.service.pool, (tx) =>
      expireMessages(tx, { validityHours: 24, limit: 10, messageIds: ids }),
    );
    expect(expired.map((e) => e.id).sort()).toEqual([...ids].sort());
    expect((await getSms(acct, ids[0] as string)).data).toMatchObject({
      status: "failed",
      operator_response: "EXPIRED",
    });
    expect((await getSms(acct, ids[1] as string)).data).toMatchObject({
      status: "failed",
      operator_response: "VALIDITY_EXPIRED",
    });
    expect(await available(acct)).toBe(100_000);
  });

  it("the sweeper finds a message past its own expiry among all waiting ones (from the watermark)", async () => {
    const acct = await t.account({ balance: 100_000 });
    const res = await send(acct, "/api/v1/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message: "swept",
      validity_period: 60,
    });
    const id = (res.body as { id: string }).id;
    await t.service.pool.query("UPDATE messages SET expires_at = now() - interval '1 second' WHERE id = $1", [
      id,
    ]);
    const expired = await withTransaction(t.service.pool, (tx) =>
      expireMessages(tx, { validityHours: 24, limit: 100 }),
    );
    expect(expired.map((e) => e.id)).toContain(id);
    expect((await getSms(acct, id)).data).toMatchObject({ status: "failed", operator_response: "EXPIRED" });
  });
});

/** A window of `minutes` that opened `ago` minutes ago, or opens in `-ago`, in UTC. */
function windowAround(
  agoMinutes: number,
  minutes: number,
): { start: string; end: string; time_zone: string } {
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  const start = new Date(Math.floor(Date.now() / 60_000) * 60_000 - agoMinutes * 60_000);
  return { start: hhmm(start), end: hhmm(new Date(start.getTime() + minutes * 60_000)), time_zone: "UTC" };
}

describe("deliver_between", () => {
  it("accepted inside the window, a message goes at once; the window it had is on the Message", async () => {
    const acct = await t.account();
    const window = windowAround(60, 180);
    const res = await send(acct, "/api/v1/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message: "now",
      deliver_between: window,
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "enqueued", deliver_between: window });
    expect(res.body).not.toHaveProperty("send_at");
  });

  it("accepted outside it, a message waits for its opening (send_at), its job due then, its validity from acceptance", async () => {
    const acct = await t.account();
    const window = windowAround(-120, 60); // opens in two hours
    const res = await send(acct, "/api/v1/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message: "later",
      deliver_between: { ...window, time_zone: "etc/utc" },
    });
    expect(res.status).toBe(202);
    const m = res.body as { id: string; send_at: string; expires_at: string; received_at: string };
    const opening = Math.floor(Date.now() / 60_000) * 60_000 + 120 * 60_000;
    expect(Math.abs(Date.parse(m.send_at) - opening)).toBeLessThanOrEqual(60_000);
    expect(Date.parse(m.send_at) % 60_000).toBe(0);
    // No validity_period: the configured one (24 h), counted from acceptance, not from the opening.
    expect(Date.parse(m.expires_at) - Date.parse(m.received_at)).toBe(24 * 3_600_000);
    expect(res.body).toMatchObject({ deliver_between: { ...window, time_zone: "UTC" } });
    const { rows } = await t.service.pool.query<{ start_after: Date }>(
      "SELECT start_after FROM pgboss.job WHERE data->'messageIds' ? $1",
      [m.id],
    );
    expect(rows[0]?.start_after.toISOString()).toBe(m.send_at);
  });

  it("a window that opens only after the validity ends is refused, nothing held", async () => {
    const acct = await t.account();
    const res = await send(acct, "/api/v1/sms/bulk", {
      to: ["+263771234567"],
      from: "SHIRI",
      message: "code",
      validity_period: 300,
      deliver_between: windowAround(-60, 60),
    });
    expect(res.status).toBe(400);
    const errors = (res.body as { error: { validation_errors: { field: string; description: string }[] } })
      .error.validation_errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe("deliver_between");
    expect(errors[0]?.description).toMatch(/^opens at .* after the message's validity ends/);
    expect(await available(acct)).toBe(1_000_000);
  });

  it("the account's default window applies to a send that names none; null sends at once", async () => {
    const acct = await t.account();
    const window = windowAround(-120, 60);
    await setSendDefaults(t.service.pool, acct.id, { deliverBetween: window });
    const byDefault = await send(acct, "/api/v1/sms", { to: "+263771234567", from: "SHIRI", message: "a" });
    expect(byDefault.body).toMatchObject({ deliver_between: window });
    expect(byDefault.body).toHaveProperty("send_at");
    const none = await send(acct, "/api/v1/sms", {
      to: "+263771234567",
      from: "SHIRI",
      message: "b",
      deliver_between: null,
    });
    expect(none.status).toBe(202);
    expect(none.body).not.toHaveProperty("send_at");
    expect(none.body).not.toHaveProperty("deliver_between");
    // The preview says the same.
    const preview = await send(acct, "/api/v1/sms/preview", {
      to: "+263771234567",
      from: "SHIRI",
      message: "c",
    });
    expect(preview.body).toMatchObject({
      data: { send_at: (byDefault.body as { send_at: string }).send_at },
    });
  });

  it("refuses a window that is not one: times, zone, shape", async () => {
    const acct = await t.account();
    const cases: [unknown, { field: string; description: string }[]][] = [
      [
        { start: "8:00", end: "24:00", time_zone: "UTC" },
        [
          { field: "deliver_between.start", description: "must be a time of day as HH:MM (00:00 to 23:59)" },
          { field: "deliver_between.end", description: "must be a time of day as HH:MM (00:00 to 23:59)" },
        ],
      ],
      [
        { start: "08:00", end: "20:00", time_zone: "Mars/Olympus" },
        [
          {
            field: "deliver_between.time_zone",
            description: "must be an IANA time zone name, such as Africa/Harare",
          },
        ],
      ],
      [
        { start: "08:00", end: "08:00", time_zone: "UTC" },
        [{ field: "deliver_between.end", description: "must differ from start" }],
      ],
      [
        { start: "08:00" },
        [
          { field: "deliver_between.end", description: "is required" },
          { field: "deliver_between.time_zone", description: "is required" },
        ],
      ],
      [
        { start: "08:00", end: "20:00", time_zone: "UTC", days: "mon" },
        [{ field: "deliver_between.days", description: "is not allowed" }],
      ],
      [
        "08:00-20:00",
        [{ field: "deliver_between", description: "must be an object with start, end and time_zone" }],
      ],
    ];
    for (const [deliver_between, errors] of cases) {
      const res = await send(acct, "/api/v1/sms/bulk", {
        to: ["+263771234567"],
        from: "SHIRI",
        message: "x",
        deliver_between,
      });
      expect(res.status, JSON.stringify(deliver_between)).toBe(400);
      expect((res.body as { error: { validation_errors: unknown } }).error.validation_errors).toEqual(errors);
    }
  });
});
