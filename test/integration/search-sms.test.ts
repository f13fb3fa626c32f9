import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCAN_WINDOW } from "../../src/search/search-messages.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService();
  acct = await t.account({ balance: 100_000_000 });
});
afterAll(() => t.stop());

interface Page {
  status: string;
  message: string;
  data: { items: { id: string; to: string; status: string; operator: string }[]; next_cursor: string | null };
}

const search = (query: string, who: TestAccount = acct) =>
  call(t.base, "GET", `/api/v1/sms${query}`, { headers: who.headers });

const sendOne = async (to: string, message = "hello", who: TestAccount = acct): Promise<string> => {
  const res = await call(t.base, "POST", "/api/v1/sms", {
    headers: who.headers,
    body: { to, from: "SHIRI", message },
  });
  expect(res.status).toBe(202);
  return (res.body as { id: string }).id;
};

const sendBulk = async (to: string[], who: TestAccount = acct) => {
  const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
    headers: who.headers,
    body: { to, from: "SHIRI", message: "bulk" },
  });
  expect(res.status).toBe(202);
  return (res.body as { data: { bulk_id: string; items: { id: string }[] } }).data;
};

/** Every page of a query, following next_cursor until null. */
async function allPages(query: string, who: TestAccount = acct): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = query.includes("?") ? "&" : "?";
    const res = await search(cursor ? `${query}${sep}cursor=${encodeURIComponent(cursor)}` : query, who);
    expect(res.status).toBe(200);
    const body = res.body as Page;
    ids.push(...body.data.items.map((i) => i.id));
    cursor = body.data.next_cursor;
    pages++;
  } while (cursor !== null);
  return { ids, pages };
}

describe("GET /api/v1/sms: happy path", () => {
  let fresh: TestAccount;
  const sent: string[] = [];
  beforeAll(async () => {
    fresh = await t.account();
    for (const to of ["+263771000001", "+263711000002", "263731000003", "+263771000004", "12345"])
      sent.push(await sendOne(to, "hi", fresh));
  });

  it("lists the account's messages newest first, each exactly as GET /api/v1/sms/{id} shows it", async () => {
    const res = await search("", fresh);
    expect(res.status).toBe(200);
    const body = res.body as Page;
    expect(body.status).toBe("success");
    expect(body.data.next_cursor).toBeNull();
    expect(body.data.items.map((i) => i.id)).toEqual([...sent].reverse());
    for (const item of body.data.items) {
      const one = await call(t.base, "GET", `/api/v1/sms/${item.id}`, { headers: fresh.headers });
      expect(item).toEqual((one.body as { data: unknown }).data);
    }
  });

  it("pages with an opaque cursor: every message once, in order, the last page's cursor null", async () => {
    const { ids, pages } = await allPages("?limit=2", fresh);
    expect(ids).toEqual([...sent].reverse());
    expect(pages).toBe(3);
  });

  it("filters by operator, status, recipient (with or without +) and time", async () => {
    const econet = (await search("?operator=econet", fresh)).body as Page;
    expect(econet.data.items.map((i) => i.to)).toEqual(["+263771000004", "+263771000001"]);
    const failed = (await search("?status=failed", fresh)).body as Page;
    expect(failed.data.items.map((i) => i.to)).toEqual(["12345"]);
    // "+" in a query string is a space unless encoded: both spellings find both stored forms.
    for (const q of ["?to=263731000003", "?to=%2B263731000003", "?to=+263731000003"]) {
      const byTo = (await search(q, fresh)).body as Page;
      expect(byTo.data.items.map((i) => i.id)).toEqual([sent[2]]);
    }
    const all = ((await search("", fresh)).body as Page).data.items;
    const { rows } = await t.service.pool.query<{ created_at: Date }>(
      "SELECT created_at FROM messages WHERE id = $1",
      [sent[2]],
    );
    const at = rows[0]?.created_at.toISOString() ?? "";
    const since = ((await search(`?since=${at}`, fresh)).body as Page).data.items.map((i) => i.id);
    const until = ((await search(`?until=${at}`, fresh)).body as Page).data.items.map((i) => i.id);
    expect(since).toContain(sent[2]); // since is inclusive
    expect(until).not.toContain(sent[2]); // until exclusive
    expect([...since, ...until].sort()).toEqual(all.map((i) => i.id).sort());
  });

  it("finds a bulk send's messages by bulk_id, and the bulk response carries it", async () => {
    const bulk = await sendBulk(["+263771000010", "+263711000011", "+263731000012"], fresh);
    expect(bulk.bulk_id).toMatch(/^[0-9a-f-]{36}$/);
    const { ids } = await allPages(`?bulk_id=${bulk.bulk_id}&limit=1`, fresh);
    expect(ids.sort()).toEqual(bulk.items.map((i) => i.id).sort());
  });

  it("a rare status over more than a scan window: sparse pages, every match found", async () => {
    const big = await t.account({ balance: 100_000_000 });
    const n = SCAN_WINDOW + 500;
    const to = Array.from({ length: n }, (_, i) => `+26377${String(2_000_000 + i).padStart(7, "0")}`);
    const bulk = await sendBulk(to, big);
    // The oldest in page order (one bulk: one created_at, then id descending): past the first window.
    const { rows } = await t.service.pool.query<{ id: string }>(
      `UPDATE messages SET status = 'failed' WHERE id IN (
         SELECT id FROM messages WHERE bulk_id = $1 ORDER BY id LIMIT 3) RETURNING id`,
      [bulk.bulk_id],
    );
    const first = (await search("?status=failed&limit=10", big)).body as Page;
    expect(first.data.items).toEqual([]);
    expect(first.data.next_cursor).not.toBeNull();
    const { ids } = await allPages("?status=failed&limit=10", big);
    expect(ids.sort()).toEqual(rows.map((r) => r.id).sort());
  });
});

describe("GET /api/v1/sms: pagination while messages are inserted", () => {
  it("never repeats or skips a message that existed when paging began", async () => {
    const pager = await t.account();
    const before: string[] = [];
    for (let i = 0; i < 12; i++)
      before.push(await sendOne(`+2637710001${String(i).padStart(2, "0")}`, "x", pager));
    const seen: string[] = [];
    const inserted: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : "?limit=3";
      // Inserts land between every page and alongside each request.
      const [res, id] = await Promise.all([search(q, pager), sendOne("+263771000999", "new", pager)]);
      inserted.push(id, await sendOne("+263771000998", "new", pager));
      const body = res.body as Page;
      seen.push(...body.data.items.map((i) => i.id));
      cursor = body.data.next_cursor;
    } while (cursor !== null);
    expect(new Set(seen).size).toBe(seen.length);
    const older = seen.filter((id) => !inserted.includes(id));
    expect(older).toEqual([...before].reverse());
  });
});

describe("GET /api/v1/sms: errors", () => {
  const validation = (errors: { field: string; description: string }[]) => ({
    status: "error",
    message: "Validation failed",
    error: {
      code: "VALIDATION_ERROR",
      description: "One or more fields failed validation",
      validation_errors: errors,
    },
  });

  it("names each bad query field in a Kit VALIDATION_ERROR", async () => {
    const cases: [string, string, string][] = [
      ["?status=sent", "status", "must be one of created, enqueued, processing, success, failed"],
      ["?operator=vodacom", "operator", "must be one of econet, netone, telecel"],
      ["?to=abc", "to", "must be a phone number in international format"],
      ["?bulk_id=42", "bulk_id", "must be a UUID"],
      ["?since=yesterday", "since", "must be an RFC 3339 date-time"],
      ["?until=2026-13-01", "until", "must be an RFC 3339 date-time"],
      ["?limit=0", "limit", "must be an integer from 1 to 100"],
      ["?limit=101", "limit", "must be an integer from 1 to 100"],
      ["?statuss=failed", "statuss", "is not allowed"],
    ];
    for (const [q, field, description] of cases) {
      const res = await search(q);
      expect(res.status, q).toBe(400);
      expect(res.body, q).toEqual(validation([{ field, description }]));
    }
  });

  it("refuses a repeated filter and a reversed range", async () => {
    const twice = await search("?status=failed&status=success");
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({ error: { validation_errors: [{ field: "status" }] } });
    const reversed = await search("?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z");
    expect(reversed.body).toEqual(validation([{ field: "until", description: "must be after since" }]));
  });

  it("answers 401 in the Kit shape without a key", async () => {
    const res = await call(t.base, "GET", "/api/v1/sms");
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: "error", error: { code: "UNAUTHORIZED" } });
  });
});

describe("GET /api/v1/sms: security", () => {
  const badCursor = {
    status: "error",
    message: "Validation failed",
    error: {
      code: "VALIDATION_ERROR",
      description: "One or more fields failed validation",
      validation_errors: [
        { field: "cursor", description: "is not a cursor issued for this account and these filters" },
      ],
    },
  };

  it("never lists another account's messages, whatever the filters", async () => {
    const mine = await t.account();
    const theirs = await t.account();
    const myId = await sendOne("+263771555555", "mine", mine);
    const bulk = await sendBulk(["+263771555555", "+263771555556"], theirs);
    expect(((await search("", mine)).body as Page).data.items.map((i) => i.id)).toEqual([myId]);
    expect(((await search("?to=263771555555", mine)).body as Page).data.items.map((i) => i.id)).toEqual([
      myId,
    ]);
    const byTheirBulk = await search(`?bulk_id=${bulk.bulk_id}`, mine);
    expect(byTheirBulk.status).toBe(200);
    expect((byTheirBulk.body as Page).data).toEqual({ items: [], next_cursor: null });
  });

  it("a cursor is refused when used by another account, with other filters, or altered", async () => {
    const owner = await t.account();
    const other = await t.account();
    for (let i = 0; i < 3; i++) await sendOne("+263771666666", "x", owner);
    for (let i = 0; i < 3; i++) await sendOne("+263771666666", "x", other);
    const cursor = ((await search("?limit=1", owner)).body as Page).data.next_cursor as string;
    expect(cursor).toBeTruthy();
    expect((await search(`?limit=1&cursor=${encodeURIComponent(cursor)}`, owner)).status).toBe(200);

    const across = await search(`?limit=1&cursor=${encodeURIComponent(cursor)}`, other);
    expect(across.status).toBe(400);
    expect(across.body).toEqual(badCursor);
    const otherFilters = await search(`?limit=1&status=enqueued&cursor=${encodeURIComponent(cursor)}`, owner);
    expect(otherFilters.body).toEqual(badCursor);

    // A position rewritten to another message (even a real one of the caller) breaks the signature.
    const [payload, signature] = cursor.split(".");
    const [at] = JSON.parse(Buffer.from(payload as string, "base64url").toString()) as [string, string];
    const forgedPayload = Buffer.from(JSON.stringify([at, "00000000-0000-4000-8000-000000000000"])).toString(
      "base64url",
    );
    for (const forged of [
      `${forgedPayload}.${signature}`,
      `${payload}.${signature}x`,
      "garbage",
      `${payload}.`,
    ]) {
      const res = await search(`?limit=1&cursor=${encodeURIComponent(forged)}`, owner);
      expect(res.status, forged).toBe(400);
      expect(res.body).toEqual(badCursor);
    }
  });
});

describe("the search indexes leave the pipeline's updates HOT", () => {
  const updated = [
    "status",
    "operator_response",
    "billing",
    "attempts",
    "locked_until",
    "locked_by",
    "last_error",
    "accepted_at",
    "delivered_at",
    "updated_at",
  ];

  it("no index on messages covers a column the pipeline updates", async () => {
    const { rows } = await t.service.pool.query<{ name: string; def: string }>(
      `SELECT indexrelid::regclass::text AS name, pg_get_indexdef(indexrelid) AS def
         FROM pg_index WHERE indrelid = 'messages'::regclass`,
    );
    expect(rows.map((r) => r.name).sort()).toEqual([
      "messages_account_page_idx",
      "messages_account_to_idx",
      "messages_bulk_page_idx",
      "messages_due_idx",
      // Partial, on expires_at (migration 031): written once, never updated.
      "messages_expires_idx",
      "messages_pkey",
    ]);
    for (const { def } of rows)
      for (const column of updated) expect(def).not.toMatch(new RegExp(`\\b${column}\\b`));
  });

  it("a status change with its companions is a HOT update", async () => {
    const id = await sendOne("+263771888888");
    const client = await t.service.pool.connect();
    try {
      // The counters are this backend's not yet reported: compared before and after.
      const counts = async () =>
        (
          await client.query<{ hot: number; updated: number }>(
            `SELECT pg_stat_get_xact_tuples_hot_updated('messages'::regclass)::int AS hot,
                    pg_stat_get_xact_tuples_updated('messages'::regclass)::int AS updated`,
          )
        ).rows[0] as { hot: number; updated: number };
      await client.query("BEGIN");
      const before = await counts();
      await client.query(
        `UPDATE messages SET status = 'success', operator_response = 'ESME_ROK', billing = 'captured',
                accepted_at = now(), delivered_at = now(), updated_at = now() WHERE id = $1`,
        [id],
      );
      const after = await counts();
      expect(after.updated - before.updated).toBe(1);
      expect(after.hot - before.hot).toBe(1);
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  });
});
