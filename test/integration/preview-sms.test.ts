import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService({ BULK_MAX_RECIPIENTS: "5", MAX_SEGMENTS: "3" });
  acct = await t.account({ balance: 2_000 });
});
afterAll(() => t.stop());

const preview = (body: unknown, who: TestAccount = acct) =>
  call(t.base, "POST", "/api/v1/sms/preview", { headers: who.headers, body });

interface Preview {
  status: string;
  data: {
    total: number;
    charge: number;
    currency: string;
    encoding: string;
    segments: number;
    available: number;
    sufficient_balance: boolean;
    items: {
      to: string;
      operator: string;
      encoding: string;
      segments: number;
      charge: number;
      status: string;
    }[];
  };
}

const validation = (errors: { field: string; description: string }[]) => ({
  status: "error",
  message: "Validation failed",
  error: {
    code: "VALIDATION_ERROR",
    description: "One or more fields failed validation",
    validation_errors: errors,
  },
});

describe("POST /api/v1/sms/preview: happy path", () => {
  it("prices a bulk body per recipient, in request order, as the send would", async () => {
    const to = ["+263771234567", "263711234567", "+263731234567", "12345"];
    const res = await preview({ to, from: "SHIRI", message: "Mhoro" });
    expect(res.status).toBe(200);
    const body = res.body as Preview;
    expect(body.status).toBe("success");
    expect(body.data).toEqual({
      total: 4,
      charge: 450 + 400 + 380 + 450,
      currency: "USD",
      encoding: "gsm7",
      segments: 1,
      available: 2_000,
      sufficient_balance: true,
      items: [
        {
          to: "+263771234567",
          operator: "econet",
          encoding: "gsm7",
          segments: 1,
          charge: 450,
          charge_currency: "USD",
          status: "enqueued",
        },
        {
          to: "263711234567",
          operator: "netone",
          encoding: "gsm7",
          segments: 1,
          charge: 400,
          charge_currency: "USD",
          status: "enqueued",
        },
        {
          to: "+263731234567",
          operator: "telecel",
          encoding: "gsm7",
          segments: 1,
          charge: 380,
          charge_currency: "USD",
          status: "enqueued",
        },
        {
          to: "12345",
          operator: "",
          encoding: "gsm7",
          segments: 1,
          charge: 450,
          charge_currency: "USD",
          status: "failed",
        },
      ],
    });
    // The bulk send of the same body is charged exactly that.
    const sent = await call(t.base, "POST", "/api/v1/sms/bulk", {
      headers: (await t.account({ balance: 10_000 })).headers,
      body: { to, from: "SHIRI", message: "Mhoro" },
    });
    expect((sent.body as { data: { charge: number } }).data.charge).toBe(body.data.charge);
  });

  it("takes a single send's body (to a string); a UCS-2 text over one segment is priced per segment", async () => {
    const message = `${"ü".repeat(60)}🙂${"a".repeat(20)}`; // the emoji is outside GSM-7: UCS-2, 82 units → 2 segments
    const res = await preview({ to: "+263771234567", from: "SHIRI", message });
    expect(res.status).toBe(200);
    const body = res.body as Preview;
    expect(body.data).toMatchObject({ total: 1, charge: 900, encoding: "ucs2", segments: 2 });
    expect(body.data.items).toEqual([
      {
        to: "+263771234567",
        operator: "econet",
        encoding: "ucs2",
        segments: 2,
        charge: 900,
        charge_currency: "USD",
        status: "enqueued",
      },
    ]);
  });

  it("says when the balance would not cover the send (which would be 422)", async () => {
    const res = await preview({ to: Array(5).fill("+263771234567"), from: "SHIRI", message: "x" });
    expect(res.status).toBe(200);
    expect((res.body as Preview).data).toMatchObject({
      charge: 2_250,
      available: 2_000,
      sufficient_balance: false,
    });
  });
});

describe("POST /api/v1/sms/preview: writes nothing", () => {
  const tables = [
    "messages",
    "bulk_sends",
    "ledger_entries",
    "idempotency_keys",
    "webhook_events",
    "pgboss.job",
  ];
  const counts = async () => {
    const out: Record<string, number> = {};
    for (const table of tables)
      out[table] = (await t.service.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))
        .rows[0]?.n as number;
    return out;
  };

  it("no row anywhere, no hold, no job, even with an Idempotency-Key and a webhook", async () => {
    const before = await counts();
    const balance = await balanceNow(t.service.pool, acct.id);
    for (const body of [
      { to: ["+263771234567", "12345"], from: "SHIRI", message: "x", webhook_url: "https://example.com/h" },
      { to: "+263771234567", from: "SHIRI", message: "x" },
    ]) {
      const res = await call(t.base, "POST", "/api/v1/sms/preview", {
        headers: { ...acct.headers, "idempotency-key": "preview-1" },
        body,
      });
      expect(res.status).toBe(200);
    }
    expect(await counts()).toEqual(before);
    expect(await balanceNow(t.service.pool, acct.id)).toEqual(balance);
  });
});

describe("POST /api/v1/sms/preview: errors", () => {
  it("validates as the send does, in the Kit shape, naming each field", async () => {
    const cases: [unknown, { field: string; description: string }[]][] = [
      [
        { to: [], from: " ", message: "" },
        [
          { field: "to", description: "must contain at least one recipient" },
          { field: "from", description: "cannot be blank" },
          { field: "message", description: "cannot be blank" },
        ],
      ],
      [
        { to: "abc", from: "SHIRI", message: "x" },
        [{ field: "to", description: "must be a phone number in international format" }],
      ],
      [
        { to: ["+263771234567", "x1"], from: "SHIRI", message: "x" },
        [{ field: "to[1]", description: "must be a phone number in international format" }],
      ],
      [
        { to: Array(6).fill("+263771234567"), from: "SHIRI", message: "x" },
        [{ field: "to", description: "must contain at most 5 recipients" }],
      ],
      [{ from: "SHIRI", message: "x" }, [{ field: "to", description: "is required" }]],
      [
        { to: "+263771234567", from: "SHIRI", message: "x", extra: 1 },
        [{ field: "extra", description: "is not allowed" }],
      ],
      [
        { to: "+263771234567", from: "SHIRI", message: "x".repeat(500) },
        [{ field: "message", description: "must fit in 3 segments (it needs 4)" }],
      ],
      [
        { to: "+263771234567", from: "OTHER", message: "x" },
        [{ field: "from", description: "unknown or unapproved sender id" }],
      ],
    ];
    for (const [body, errors] of cases) {
      const res = await preview(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body).toEqual(validation(errors));
    }
  });

  it("malformed JSON is Kit BAD_REQUEST; no key is 401", async () => {
    const bad = await call(t.base, "POST", "/api/v1/sms/preview", { headers: acct.headers, rawBody: "{to:" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: "error", error: { code: "BAD_REQUEST" } });
    const anonymous = await call(t.base, "POST", "/api/v1/sms/preview", { body: { to: "+263771234567" } });
    expect(anonymous.status).toBe(401);
  });

  it("a sender id approved on another account is not approved here", async () => {
    const other = await t.account({ senders: ["THEIRS"] });
    expect((await preview({ to: "+263771234567", from: "THEIRS", message: "x" }, other)).status).toBe(200);
    const res = await preview({ to: "+263771234567", from: "THEIRS", message: "x" });
    expect(res.body).toEqual(validation([{ field: "from", description: "unknown or unapproved sender id" }]));
  });
});

describe("POST /api/v1/sms/preview: a batch (issue 30)", () => {
  it("prices each item's text, shows it filled in, and both prices when smart encoding would change one", async () => {
    const res = await preview({
      from: "SHIRI",
      template: "Hi {{name}} \u2013 {{code}}",
      messages: [
        { to: "+263771234567", variables: { name: "Rudo", code: 1 } },
        { to: "+263711234567", variables: { name: "\u{1F600}", code: 2 } },
      ],
    });
    expect(res.status).toBe(200);
    expect((res.body as { data: unknown }).data).toEqual({
      total: 2,
      charge: 450 + 400,
      currency: "USD",
      encoding: "ucs2",
      segments: 1,
      available: 2_000,
      sufficient_balance: true,
      smart_encoding: { applied: false, charge_as_written: 850, charge_smart_encoded: 850 },
      items: [
        {
          to: "+263771234567",
          operator: "econet",
          encoding: "ucs2",
          segments: 1,
          charge: 450,
          charge_currency: "USD",
          status: "enqueued",
          message: "Hi Rudo \u2013 1",
        },
        {
          to: "+263711234567",
          operator: "netone",
          encoding: "ucs2",
          segments: 1,
          charge: 400,
          charge_currency: "USD",
          status: "enqueued",
          message: "Hi \u{1F600} \u2013 2",
        },
      ],
    });
    const smart = await preview({
      from: "SHIRI",
      smart_encoding: true,
      messages: [{ to: "+263771234567", message: `${"a".repeat(80)}\u2019` }],
    });
    expect((smart.body as { data: unknown }).data).toMatchObject({
      charge: 450,
      smart_encoding: { applied: true, charge_as_written: 900, charge_smart_encoded: 450 },
      items: [{ message: `${"a".repeat(80)}'`, smart_encoded: true, encoding: "gsm7" }],
    });
  });

  it("answers a batch's errors as the batch would: a missing variable names its item", async () => {
    const res = await preview({
      from: "SHIRI",
      template: "{{a}}",
      messages: [{ to: "+263771234567", variables: {} }],
    });
    expect(res.body).toEqual(
      validation([{ field: "messages[0].variables.a", description: "is required by the template" }]),
    );
  });
});
