import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXPORT_COLUMNS } from "../../src/intake/routes/export-sms.ts";
import { call, startTestService, type TestAccount, type TestService } from "../support/service.ts";

let t: TestService;
let acct: TestAccount;

beforeAll(async () => {
  t = await startTestService({ SEARCH_EXPORT_MAX_ROWS: "2500" });
  acct = await t.account({ balance: 100_000_000 });
});
afterAll(() => t.stop());

/** A small RFC 4180 reader for the test: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      record.push(field);
      field = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i++;
    } else field += c;
  }
  expect(field).toBe(""); // every record ended by CRLF
  return records;
}

const exportCsv = async (query: string, who: TestAccount = acct) => {
  const res = await call(t.base, "GET", `/api/v1/sms/export.csv${query}`, { headers: who.headers });
  return { status: res.status, type: res.headers.get("content-type"), text: res.text };
};

describe("GET /api/v1/sms/export.csv: happy path", () => {
  it("writes every matching message, newest first, as the search shows them, quoted where needed", async () => {
    const who = await t.account();
    const texts = ["plain", "a, comma", 'say "hi"', "two\r\nlines", "=1+2"];
    const ids: string[] = [];
    for (const message of texts) {
      const res = await call(t.base, "POST", "/api/v1/sms", {
        headers: who.headers,
        body: { to: "+263771234567", from: "SHIRI", message },
      });
      ids.push((res.body as { id: string }).id);
    }
    const res = await exportCsv("", who);
    expect(res.status).toBe(200);
    expect(res.type).toBe("text/csv; charset=utf-8");
    const [header, ...rows] = parseCsv(res.text);
    expect(header).toEqual([...EXPORT_COLUMNS]);
    expect(rows.map((r) => r[0])).toEqual([...ids].reverse());
    expect(rows.map((r) => r[2])).toEqual([...texts].reverse());
    const search = await call(t.base, "GET", "/api/v1/sms", { headers: who.headers });
    const items = (search.body as { data: { items: Record<string, string | null>[] } }).data.items;
    rows.forEach((row, i) => {
      const item = items[i] as Record<string, string | null>;
      expect(row.slice(0, 12)).toEqual(EXPORT_COLUMNS.slice(0, 12).map((c) => item[c] ?? ""));
      expect(row[12]).toBe(""); // not part of a bulk send
    });
  });

  it("streams a large export in chunks, every row once, and applies the filters", async () => {
    const to = Array.from({ length: 2_400 }, (_, i) => `+26377${String(3_000_000 + i).padStart(7, "0")}`);
    to[7] = "12345"; // unroutable: failed
    const bulk = await call(t.base, "POST", "/api/v1/sms/bulk", {
      headers: acct.headers,
      body: { to, from: "SHIRI", message: "many" },
    });
    const bulkId = (bulk.body as { data: { bulk_id: string } }).data.bulk_id;
    const all = parseCsv((await exportCsv(`?bulk_id=${bulkId}`)).text).slice(1);
    expect(all.length).toBe(2_400);
    expect(new Set(all.map((r) => r[0])).size).toBe(2_400);
    expect(all.every((r) => r[12] === bulkId)).toBe(true);
    const failed = parseCsv((await exportCsv(`?bulk_id=${bulkId}&status=failed`)).text).slice(1);
    expect(failed.map((r) => r[1])).toEqual(["12345"]);
  });
});

describe("GET /api/v1/sms/export.csv: reconciliation", () => {
  it("says where each charge stands: held, captured, or released", async () => {
    const who = await t.account();
    const send = async (to: string) =>
      (
        (
          await call(t.base, "POST", "/api/v1/sms", {
            headers: who.headers,
            body: { to, from: "SHIRI", message: "billing" },
          })
        ).body as { id: string }
      ).id;
    const waiting = await send("+263771234567");
    const unroutable = await send("12345");
    const cancelled = await send("+263771234568");
    expect((await call(t.base, "DELETE", `/api/v1/sms/${cancelled}`, { headers: who.headers })).status).toBe(
      200,
    );
    const [header, ...rows] = parseCsv((await exportCsv("", who)).text);
    const billing = header?.indexOf("billing") ?? -1;
    const byId = new Map(rows.map((r) => [r[0], r]));
    // The charge column is the price, whatever became of it; billing says whether it was taken.
    expect([waiting, unroutable, cancelled].map((id) => byId.get(id)?.[billing])).toEqual([
      "held",
      "captured",
      "released",
    ]);
    expect(byId.get(cancelled)?.[header?.indexOf("charge") ?? -1]).not.toBe("0");
  });
});

describe("GET /api/v1/sms/export.csv: errors", () => {
  it("a query covering more than SEARCH_EXPORT_MAX_ROWS is refused before anything is written", async () => {
    const who = await t.account({ balance: 100_000_000 });
    const to = Array.from({ length: 2_501 }, () => "+263771234567");
    await call(t.base, "POST", "/api/v1/sms/bulk", {
      headers: who.headers,
      body: { to, from: "SHIRI", message: "m" },
    });
    // status is filtered on the rows: the bound counts what the export would have to read.
    const res = await call(t.base, "GET", "/api/v1/sms/export.csv?status=failed", { headers: who.headers });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status: "error",
      message: "Validation failed",
      error: {
        code: "VALIDATION_ERROR",
        description: "One or more fields failed validation",
        validation_errors: [
          {
            field: "since",
            description:
              "the query covers more than 2500 messages: narrow it with since and until (or bulk_id, to)",
          },
        ],
      },
    });
  });

  it("bad filters are Kit validation errors naming the field; cursor and limit are not export parameters", async () => {
    const bad = await call(t.base, "GET", "/api/v1/sms/export.csv?operator=x&limit=5", {
      headers: acct.headers,
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      error: {
        code: "VALIDATION_ERROR",
        validation_errors: [
          { field: "operator", description: "must be one of econet, netone, telecel" },
          { field: "limit", description: "is not allowed" },
        ],
      },
    });
    const unauthenticated = await call(t.base, "GET", "/api/v1/sms/export.csv");
    expect(unauthenticated.status).toBe(401);
  });
});

describe("GET /api/v1/sms/export.csv: security", () => {
  it("never includes another account's messages, even asked for by their bulk_id or number", async () => {
    const mine = await t.account();
    const theirs = await t.account();
    const bulk = await call(t.base, "POST", "/api/v1/sms/bulk", {
      headers: theirs.headers,
      body: { to: ["+263771777777", "+263771777778"], from: "SHIRI", message: "theirs" },
    });
    const bulkId = (bulk.body as { data: { bulk_id: string } }).data.bulk_id;
    const sent = await call(t.base, "POST", "/api/v1/sms", {
      headers: mine.headers,
      body: { to: "+263771777777", from: "SHIRI", message: "mine" },
    });
    const myId = (sent.body as { id: string }).id;
    expect(
      parseCsv((await exportCsv("", mine)).text)
        .slice(1)
        .map((r) => r[0]),
    ).toEqual([myId]);
    expect(
      parseCsv((await exportCsv("?to=263771777777", mine)).text)
        .slice(1)
        .map((r) => r[0]),
    ).toEqual([myId]);
    expect(parseCsv((await exportCsv(`?bulk_id=${bulkId}`, mine)).text).slice(1)).toEqual([]);
  });
});
