import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.ts";
import { balanceNow } from "../../src/lifecycle/open-mark.ts";
import { prepareSend } from "../../src/sending/prepare-send.ts";
import { recordSends } from "../../src/sending/record-send.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

/**
 * POST /api/v1/sms/batch (issue 30): many messages in one request, each its own text or a template
 * filled per item; priced per message, all-or-nothing like a bulk send, answered like one.
 */
let t: TestService;

beforeAll(async () => {
  t = await startTestService({ BULK_MAX_RECIPIENTS: "5", MAX_SEGMENTS: "2" });
});
afterAll(() => t?.stop());

const batch = (who: TestAccount, body: unknown, headers: Record<string, string> = {}) =>
  call(t.base, "POST", "/api/v1/sms/batch", { headers: { ...who.headers, ...headers }, body });
const available = async (who: TestAccount) => (await balanceNow(t.service.pool, who.id))?.available ?? -1;
const messageCount = async (who: TestAccount) =>
  Number(
    (await t.service.pool.query("SELECT count(*) AS n FROM messages WHERE account_id = $1", [who.id])).rows[0]
      ?.n,
  );

interface BatchAnswer {
  status: string;
  message: string;
  data: {
    bulk_id: string;
    total: number;
    charge: number;
    currency: string;
    items: {
      id: string;
      to: string;
      status: string;
      operator: string;
      charge: number;
      smart_encoded?: true;
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

describe("a batch of texts", () => {
  it("sends each item its own text, priced per message, answered like a bulk send in request order", async () => {
    const acct = await t.account({ balance: 100_000 });
    const long = "a".repeat(200); // two GSM-7 segments
    const res = await batch(acct, {
      from: "SHIRI",
      messages: [
        { to: "+263771234567", message: "short" },
        { to: "+263711234567", message: long },
        { to: "+263731234567", message: "Mhoro \u{1F44B}" },
        { to: "12345", message: "nowhere" },
      ],
    });
    expect(res.status).toBe(202);
    const body = res.body as BatchAnswer;
    expect(body).toMatchObject({ status: "success", message: "batch sms enqueued" });
    expect(body.data).toMatchObject({ total: 4, currency: "USD", charge: 450 + 2 * 400 + 380 + 450 });
    expect(body.data.items.map((i) => [i.to, i.operator, i.status, i.charge])).toEqual([
      ["+263771234567", "econet", "enqueued", 450],
      ["+263711234567", "netone", "enqueued", 800],
      ["+263731234567", "telecel", "enqueued", 380],
      ["12345", "", "failed", 450],
    ]);
    expect(await available(acct)).toBe(100_000 - body.data.charge);
    // Each message has its own text, encoding and segments; the batch is a bulk send.
    const { rows } = await t.service.pool.query(
      "SELECT id, body, encoding, segments, bulk_id FROM messages WHERE account_id = $1",
      [acct.id],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(body.data.items.map((i) => byId.get(i.id))).toMatchObject([
      { body: "short", encoding: "gsm7", segments: 1, bulk_id: body.data.bulk_id },
      { body: long, encoding: "gsm7", segments: 2 },
      { body: "Mhoro \u{1F44B}", encoding: "ucs2", segments: 1 },
      { body: "nowhere", segments: 1 },
    ]);
    const summary = await call(t.base, "GET", `/api/v1/sms/bulk/${body.data.bulk_id}`, {
      headers: acct.headers,
    });
    expect(summary.body).toMatchObject({ data: { total: 4, charge: body.data.charge } });
    const found = await call(t.base, "GET", `/api/v1/sms?bulk_id=${body.data.bulk_id}`, {
      headers: acct.headers,
    });
    expect((found.body as { data: { items: unknown[] } }).data.items).toHaveLength(4);
  });

  it("smart encoding applies per item: only the texts it makes GSM-7 say so", async () => {
    const acct = await t.account();
    const res = await batch(acct, {
      from: "SHIRI",
      smart_encoding: true,
      messages: [
        { to: "+263771234567", message: "It\u2019s here" },
        { to: "+263771234567", message: "It\u2019s \u{1F600}" },
        { to: "+263771234567", message: "plain" },
      ],
    });
    expect(res.status).toBe(202);
    const items = (res.body as BatchAnswer).data.items;
    expect(items.map((i) => i.smart_encoded ?? false)).toEqual([true, false, false]);
    const got = await call(t.base, "GET", `/api/v1/sms/${items[0]?.id}`, { headers: acct.headers });
    expect((got.body as { data: object }).data).toMatchObject({ message: "It's here", smart_encoded: true });
  });
});

describe("a batch with a template", () => {
  it("fills each item's text from its variables, numbers as JSON writes them", async () => {
    const acct = await t.account();
    const res = await batch(acct, {
      from: "SHIRI",
      template: "Hi {{name}}, you owe {{ amount }}. {{name}}!",
      messages: [
        { to: "+263771234567", variables: { name: "Rudo", amount: "$12.50" } },
        { to: "+263711234567", variables: { name: "Tendai", amount: 3, unused: "x" } },
      ],
    });
    expect(res.status).toBe(202);
    const items = (res.body as BatchAnswer).data.items;
    const texts = await Promise.all(
      items.map(async (i) => {
        const got = await call(t.base, "GET", `/api/v1/sms/${i.id}`, { headers: acct.headers });
        return (got.body as { data: { message: string } }).data.message;
      }),
    );
    expect(texts).toEqual(["Hi Rudo, you owe $12.50. Rudo!", "Hi Tendai, you owe 3. Tendai!"]);
  });

  it("writes a number in its shortest form, and refuses one it cannot write as sent; the preview too", async () => {
    const acct = await t.account({ balance: 100_000 });
    const texts = async (res: { body: unknown }) =>
      Promise.all(
        (res.body as BatchAnswer).data.items.map(async (i) => {
          const got = await call(t.base, "GET", `/api/v1/sms/${i.id}`, { headers: acct.headers });
          return (got.body as { data: { message: string } }).data.message;
        }),
      );
    const raw = (path: string, rawBody: string) =>
      call(t.base, "POST", `/api/v1/sms/${path}`, { headers: acct.headers, rawBody });
    const items = (...variables: string[]) =>
      `{"from":"SHIRI","template":"{{n}} {{m}}","messages":[${variables
        .map((v) => `{"to":"+263771234567","variables":${v}}`)
        .join(",")}]}`;

    const shortest = await raw("batch", items('{"n":12.50,"m":-0}', '{"n":1e3,"m":"12.50"}'));
    expect(shortest.status).toBe(202);
    expect(await texts(shortest)).toEqual(["12.5 0", "1000 12.50"]);

    const inexact = items(
      '{"n":12345678901234567890,"m":1e21}',
      '{"n":1,"m":0.1234567890123456}',
      '{"n":1e-7,"m":"1e-7"}',
    );
    const refused = validation([
      {
        field: "messages[0].variables.n",
        description: "must be a string: this number cannot be written exactly",
      },
      {
        field: "messages[0].variables.m",
        description: "must be a string: this number cannot be written exactly",
      },
      {
        field: "messages[1].variables.m",
        description: "must be a string: this number cannot be written exactly",
      },
      {
        field: "messages[2].variables.n",
        description: "must be a string: this number cannot be written exactly",
      },
    ]);
    for (const path of ["batch", "preview"]) {
      const res = await raw(path, inexact);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused);
    }
    expect(await messageCount(acct)).toBe(2); // the first batch's only
  });

  it("a missing variable refuses the whole batch, naming the item and the variable; nothing is written", async () => {
    const acct = await t.account({ balance: 100_000 });
    const res = await batch(acct, {
      from: "SHIRI",
      template: "Hi {{name}}, your code is {{code}}",
      messages: [
        { to: "+263771234567", variables: { name: "Rudo", code: "1" } },
        { to: "+263771234568", variables: { name: "Tino" } },
        { to: "+263771234569", variables: {} },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      validation([
        { field: "messages[1].variables.code", description: "is required by the template" },
        { field: "messages[2].variables.name", description: "is required by the template" },
        { field: "messages[2].variables.code", description: "is required by the template" },
      ]),
    );
    expect(await available(acct)).toBe(100_000);
    expect(await messageCount(acct)).toBe(0);
  });

  it("refuses a placeholder that is none, items of the other kind, and a filled text over the limits", async () => {
    const acct = await t.account();
    expect(
      (
        await batch(acct, {
          from: "SHIRI",
          template: "Hi {{first name}}",
          messages: [{ to: "+263771234567", variables: {} }],
        })
      ).body,
    ).toEqual(
      validation([
        {
          field: "template",
          description:
            "{{first name}} is not a placeholder: a name is letters, digits and _, not starting with a digit",
        },
      ]),
    );
    expect(
      (
        await batch(acct, {
          from: "SHIRI",
          template: "Hi {{name}}",
          messages: [{ to: "+263771234567", message: "x" }],
        })
      ).body,
    ).toEqual(
      validation([
        { field: "messages[0].message", description: "is not allowed with a template" },
        { field: "messages[0].variables", description: "is required with a template" },
      ]),
    );
    expect(
      (await batch(acct, { from: "SHIRI", messages: [{ to: "+263771234567", variables: { a: "1" } }] })).body,
    ).toEqual(
      validation([
        { field: "messages[0].message", description: "is required" },
        { field: "messages[0].variables", description: "is allowed only with a template" },
      ]),
    );
    expect(
      (
        await batch(acct, {
          from: "SHIRI",
          template: "{{text}}",
          messages: [
            { to: "+263771234567", variables: { text: "b".repeat(400) } },
            { to: "+263771234567", variables: { text: "  " } },
            { to: "+263771234567", variables: { text: "bell\u0007" } },
            { to: "+263771234567", variables: { text: { nested: true } } },
          ],
        })
      ).body,
    ).toEqual(
      validation([
        {
          field: "messages[3].variables.text",
          description: "must be a string or a number",
        },
        // Told in the same answer: the other items' filled texts.
        {
          field: "messages[0].variables",
          description: "make a text that must fit in 2 segments (it needs 3)",
        },
        { field: "messages[1].variables", description: "make a text that cannot be blank" },
        {
          field: "messages[2].variables",
          description: "make a text that must not contain control characters",
        },
      ]),
    );
    expect(await messageCount(acct)).toBe(0);
  });

  it("tells every problem in one answer: a bad number, a missing variable, a text too long, the kind", async () => {
    const acct = await t.account();
    const probe = {
      from: "SHIRI",
      template: "Hi {{x}}",
      messages: [
        { to: "+263771234567", variables: { x: "a" } },
        { to: "+263771234568", variables: {} },
        { to: "not a number", variables: { x: "c" } },
      ],
    };
    const res = await batch(acct, probe);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      validation([
        { field: "messages[2].to", description: "must be a phone number in international format" },
        { field: "messages[1].variables.x", description: "is required by the template" },
      ]),
    );
    // The preview answers as the send does.
    expect(
      (await call(t.base, "POST", "/api/v1/sms/preview", { headers: acct.headers, body: probe })).body,
    ).toEqual(res.body);
    // Without a template, a bad number beside a text over MAX_SEGMENTS, and a body whose `from` is
    // missing (which stops zod's checks across fields) beside an item of the other kind.
    expect(
      (
        await batch(acct, {
          from: "SHIRI",
          messages: [
            { to: "12", message: "a" },
            { to: "+263771234567", message: "b".repeat(400) },
          ],
        })
      ).body,
    ).toEqual(
      validation([
        { field: "messages[0].to", description: "must be a phone number in international format" },
        { field: "messages[1].message", description: "must fit in 2 segments (it needs 3)" },
      ]),
    );
    expect(
      (
        await batch(acct, {
          template: "Hi {{x}}",
          messages: [
            { to: "+263771234567", message: "a" },
            { to: "+263771234567", variables: {} },
          ],
        })
      ).body,
    ).toEqual(
      validation([
        { field: "from", description: "is required" },
        { field: "messages[0].message", description: "is not allowed with a template" },
        { field: "messages[0].variables", description: "is required with a template" },
        { field: "messages[1].variables.x", description: "is required by the template" },
      ]),
    );
    // A list refused whole is not read item by item.
    const six = Array.from({ length: 6 }, () => ({ to: "+263771234567", variables: {} }));
    expect((await batch(acct, { from: "SHIRI", template: "Hi {{x}}", messages: six })).body).toEqual(
      validation([{ field: "messages", description: "must contain at most 5 messages" }]),
    );
    expect(await messageCount(acct)).toBe(0);
  });
});

describe("a batch is all-or-nothing, like a bulk send", () => {
  it("one bad number refuses it all", async () => {
    const acct = await t.account();
    const res = await batch(acct, {
      from: "SHIRI",
      messages: [
        { to: "+263771234567", message: "a" },
        { to: "not a number", message: "b" },
      ],
    });
    expect(res.body).toEqual(
      validation([
        { field: "messages[1].to", description: "must be a phone number in international format" },
      ]),
    );
    expect(await messageCount(acct)).toBe(0);
  });

  it("a balance that does not cover every message: 422, nothing written", async () => {
    const acct = await t.account({ balance: 1_000 });
    const res = await batch(acct, {
      from: "SHIRI",
      messages: [
        { to: "+263771234567", message: "a" },
        { to: "+263771234567", message: "b" },
        { to: "+263771234567", message: "c" },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ status: "error", error: { code: "UNPROCESSABLE_ENTITY" } });
    expect(await available(acct)).toBe(1_000);
    expect(await messageCount(acct)).toBe(0);
  });

  it("an unapproved sender, too many messages, none at all: validation errors", async () => {
    const acct = await t.account();
    expect(
      (await batch(acct, { from: "NOBODY", messages: [{ to: "+263771234567", message: "a" }] })).body,
    ).toEqual(validation([{ field: "from", description: "unknown or unapproved sender id" }]));
    const six = Array.from({ length: 6 }, () => ({ to: "+263771234567", message: "a" }));
    expect((await batch(acct, { from: "SHIRI", messages: six })).body).toEqual(
      validation([{ field: "messages", description: "must contain at most 5 messages" }]),
    );
    expect((await batch(acct, { from: "SHIRI", messages: [] })).body).toEqual(
      validation([{ field: "messages", description: "must contain at least one message" }]),
    );
    expect((await batch(acct, { from: "SHIRI" })).body).toEqual(
      validation([{ field: "messages", description: "is required" }]),
    );
    expect(await messageCount(acct)).toBe(0);
  });

  it("an Idempotency-Key replay answers the first 202 and writes nothing again", async () => {
    const acct = await t.account({ balance: 100_000 });
    const body = { from: "SHIRI", messages: [{ to: "+263771234567", message: "once" }] };
    const first = await batch(acct, body, { "idempotency-key": "batch-1" });
    const again = await batch(acct, body, { "idempotency-key": "batch-1" });
    expect(first.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(await messageCount(acct)).toBe(1);
    expect(await available(acct)).toBe(100_000 - 450);
  });
});

describe("a batch committed together with other sends", () => {
  it("keeps each message's text when it shares a group commit with single and bulk sends", async () => {
    const acct = await t.account({ balance: 1_000_000 });
    const sends = await Promise.all([
      batch(acct, {
        from: "SHIRI",
        messages: [
          { to: "+263771234567", message: "batch one" },
          { to: "+263771234567", message: "batch two" },
        ],
      }),
      ...Array.from({ length: 4 }, (_, i) =>
        call(t.base, "POST", "/api/v1/sms", {
          headers: acct.headers,
          body: { to: "+263771234567", from: "SHIRI", message: `single ${i}` },
        }),
      ),
      call(t.base, "POST", "/api/v1/sms/bulk", {
        headers: acct.headers,
        body: { to: ["+263771234567", "+263711234567"], from: "SHIRI", message: "bulk text" },
      }),
    ]);
    expect(sends.map((s) => s.status)).toEqual(Array(6).fill(202));
    const { rows } = await t.service.pool.query<{ body: string }>(
      "SELECT body FROM messages WHERE account_id = $1 ORDER BY body",
      [acct.id],
    );
    expect(rows.map((r) => r.body)).toEqual([
      "batch one",
      "batch two",
      "bulk text",
      "bulk text",
      "single 0",
      "single 1",
      "single 2",
      "single 3",
    ]);
  });

  it("in one transaction, a batch's own texts and a single send's body each land on their messages", async () => {
    const acct = await t.account({ balance: 1_000_000 });
    const base = {
      accountId: acct.id,
      currency: "USD",
      from: "SHIRI",
      webhookUrl: null,
      webhookEvents: null,
    };
    const batchSend = prepareSend({
      ...base,
      body: "",
      recipients: ["+263771234567", "+263711234567"],
      texts: [
        { body: "own \u{1F600}", smartEncoded: false },
        { body: "own two", smartEncoded: true },
      ],
      bulk: true,
    });
    const single = prepareSend({ ...base, body: "the single", recipients: ["+263731234567"], bulk: false });
    const { refused } = await withTransaction(t.service.pool, (tx) =>
      recordSends(
        tx,
        t.service.boss,
        acct.id,
        [
          { send: single, accountWebhookEvents: [] },
          { send: batchSend, accountWebhookEvents: [] },
        ],
        { dispatchBatchSize: 50 },
      ),
    );
    expect(refused.size).toBe(0);
    const { rows } = await t.service.pool.query(
      "SELECT body, encoding, segments, smart_encoded FROM messages WHERE account_id = $1 ORDER BY body",
      [acct.id],
    );
    expect(rows).toEqual([
      { body: "own two", encoding: "gsm7", segments: 1, smart_encoded: true },
      { body: "own \u{1F600}", encoding: "ucs2", segments: 1, smart_encoded: null },
      { body: "the single", encoding: "gsm7", segments: 1, smart_encoded: null },
    ]);
  });
});
