/**
 * Message search over a large table: `npm run bench:search`.
 *
 * Seeds a fresh database of its own (DATABASE_URL's server, else the embedded one) with
 * BENCH_SEARCH_MESSAGES messages (2,000,000 by default) in set-based statements from
 * generate_series: one large account (95 %, including 200 bulk sends of 1,000) and a smaller one,
 * 27 hours of traffic at one message per 50 ms, three operators, 60,000 recipients, 1 % failed,
 * a rare `processing` status (1 in 5,000). The search indexes are dropped for the load and built
 * after it (their definitions read back from the catalogue), then VACUUM ANALYZE. Then the API
 * runs in a process of its own and each typical query is asked BENCH_SEARCH_RUNS times in a row
 * over HTTP by the large account (one warm-up first; exports 5 times): latency p50 / p95 / max per
 * query, and for searches the statement alone, run from this process as the route runs it.
 * Writes bench/results/search.json and prints a Markdown table; drops the database at the end.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createAccount } from "../src/accounts/accounts.ts";
import { addSenderId } from "../src/accounts/sender-ids.ts";
import { migrate } from "../src/db/migrate.ts";
import { createPool, type Pool, withTransaction } from "../src/db/pool.ts";
import { DEFAULT_SEARCH_LIMIT, searchSmsQuery, toFilters } from "../src/intake/routes/search-sms.ts";
import { cursorKey, readCursor } from "../src/search/cursor.ts";
import { filtersScope, searchMessages } from "../src/search/search-messages.ts";
import { knob } from "./lib/knob.ts";
import { loadAverage, machine, sourceVersion } from "./lib/machine.ts";
import { provisionBenchDatabase } from "./lib/postgres.ts";
import { markdownTable, round } from "./lib/report.ts";
import { measureCompiledUnlessTold, type ShiriProcess, startShiriProcess } from "./lib/shiri-process.ts";

const RESULTS_FILE = fileURLToPath(new URL("./results/search.json", import.meta.url));
const MESSAGES = knob("BENCH_SEARCH_MESSAGES", 2_000_000, 10_000, 10_000_000);
const RUNS = knob("BENCH_SEARCH_RUNS", 30, 1, 1_000);
const CHUNK = 250_000;
const BULKS = 200;
const BULK_SIZE = 1_000;
const BASE = "2026-01-01T00:00:00Z";

async function setUpAccount(pool: Pool, name: string) {
  const { account, key } = await withTransaction(pool, (tx) =>
    createAccount(tx, { name, currency: "USD", openingBalance: 1_000_000_000 }),
  );
  await withTransaction(pool, (tx) => addSenderId(tx, account.id, "BENCH", "verified"));
  return { id: account.id, key: key.token };
}

/** Message g (0 … MESSAGES-1): the first BULKS × BULK_SIZE are the big account's bulk sends. */
const INSERT_MESSAGES = `
  INSERT INTO messages (id, account_id, bulk_id, "to", body, sender_id, operator, encoding, segments, charge,
                        charge_currency, operator_response, status, billing, received_at, created_at,
                        delivered_at)
  SELECT gen_random_uuid(),
         CASE WHEN g < $4 OR g % 20 <> 0 THEN $1::uuid ELSE $2::uuid END,
         CASE WHEN g < $4 THEN bulks.ids[g / $5 + 1] END,
         (ARRAY['+26377', '+26371', '+26373'])[g % 3 + 1] || lpad(((g / 3) % 20000)::text, 7, '0'),
         'Your code is ' || lpad((g % 1000000)::text, 6, '0'), 'BENCH',
         (ARRAY['econet', 'netone', 'telecel'])[g % 3 + 1], 'gsm7', 1,
         (ARRAY[450, 400, 380])[g % 3 + 1], 'USD',
         CASE WHEN g % 100 = 1 THEN 'UNDELIV' WHEN g % 5000 = 7 THEN 'ESME_ROK' ELSE 'DELIVRD' END,
         CASE WHEN g % 100 = 1 THEN 'failed' WHEN g % 5000 = 7 THEN 'processing' ELSE 'success' END,
         CASE WHEN g % 100 = 1 THEN 'released' WHEN g % 5000 = 7 THEN 'held' ELSE 'captured' END,
         t.at, t.at, CASE WHEN g % 100 <> 1 AND g % 5000 <> 7 THEN t.at + interval '5 seconds' END
    FROM generate_series($6::int, $7::int) AS g
   CROSS JOIN (SELECT array_agg(id ORDER BY created_at) AS ids FROM bulk_sends WHERE account_id = $1) bulks
   CROSS JOIN LATERAL (SELECT $3::timestamptz
                              + (CASE WHEN g < $4 THEN (g / $5) * $5 ELSE g END) * interval '50 ms' AS at) t`;

async function seed(pool: Pool, big: string, small: string): Promise<{ seconds: number }> {
  const started = performance.now();
  const client = await pool.connect();
  try {
    await client.query("SET statement_timeout = 0");
    // Foreign-key triggers off for this session's load only (the rows are consistent by construction).
    await client.query("SET session_replication_role = replica");
    await client.query("SET maintenance_work_mem = '256MB'");
    await client.query(
      `INSERT INTO bulk_sends (id, account_id, sender_id, total, charge, currency, created_at)
       SELECT gen_random_uuid(), $1, 'BENCH', $2, $2 * 450, 'USD', $3::timestamptz + (b * $2) * interval '50 ms'
         FROM generate_series(0, $4 - 1) AS b`,
      [big, BULK_SIZE, BASE, BULKS],
    );
    const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes
        WHERE schemaname = 'public' AND tablename = 'messages' AND indexname <> 'messages_pkey'`,
    );
    for (const { indexname } of indexes) await client.query(`DROP INDEX ${indexname}`);
    for (let lo = 0; lo < MESSAGES; lo += CHUNK) {
      const hi = Math.min(MESSAGES, lo + CHUNK) - 1;
      await client.query(INSERT_MESSAGES, [big, small, BASE, BULKS * BULK_SIZE, BULK_SIZE, lo, hi]);
      process.stderr.write(
        `  seeded ${hi + 1} / ${MESSAGES} (${round((performance.now() - started) / 1000)} s)\n`,
      );
    }
    for (const { indexname, indexdef } of indexes) {
      await client.query(indexdef);
      process.stderr.write(`  index ${indexname} (${round((performance.now() - started) / 1000)} s)\n`);
    }
    await client.query("VACUUM (ANALYZE) messages");
    await client.query("VACUUM (ANALYZE) bulk_sends");
  } finally {
    await client.query("RESET session_replication_role").catch(() => {});
    client.release();
  }
  return { seconds: round((performance.now() - started) / 1000) };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

interface Measured {
  query: string;
  path: string;
  items: number;
  runs: number;
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
  /** The search's SQL alone (searchMessages from this process), without HTTP, auth and JSON. */
  sql_p50_ms: number | null;
  sql_p95_ms: number | null;
}

/** Times a search path's statement alone, parsed and run as the route runs it. */
async function measureSql(pool: Pool, accountId: string, path: string, runs: number) {
  if (!path.startsWith("/api/v1/sms?")) return { sql_p50_ms: null, sql_p95_ms: null };
  const q = searchSmsQuery.parse(Object.fromEntries(new URL(path, "http://bench").searchParams));
  const filters = toFilters(q);
  const key = await cursorKey(pool);
  const after = q.cursor ? readCursor(key, filtersScope(accountId, filters), q.cursor) : null;
  const page = { limit: q.limit ?? DEFAULT_SEARCH_LIMIT, after };
  await searchMessages(pool, accountId, filters, page);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await searchMessages(pool, accountId, filters, page);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { sql_p50_ms: round(percentile(times, 50), 2), sql_p95_ms: round(percentile(times, 95), 2) };
}

async function measure(
  api: ShiriProcess,
  pool: Pool,
  account: { id: string; key: string },
  query: string,
  path: string,
): Promise<Measured> {
  const { key } = account;
  // An export reads thousands of rows: fewer runs, so the bench stays short on a shared machine.
  const runs = path.includes("export.csv") ? Math.min(RUNS, 5) : RUNS;
  const headers = { authorization: `Bearer ${key}` };
  const once = async () => {
    const started = performance.now();
    const res = await fetch(api.base + path, { headers });
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 300)}`);
    const items = path.includes("export.csv")
      ? text.split("\r\n").length - 2
      : ((JSON.parse(text) as { data: { items?: unknown[] } }).data.items?.length ?? 1);
    return { ms, items };
  };
  const { items } = await once();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push((await once()).ms);
  times.sort((a, b) => a - b);
  return {
    query,
    path,
    items,
    runs,
    p50_ms: round(percentile(times, 50), 2),
    p95_ms: round(percentile(times, 95), 2),
    max_ms: round(times[times.length - 1] as number, 2),
    ...(await measureSql(pool, account.id, path, runs)),
  };
}

/** The cursor for the page after `pages` pages of `path`. */
async function cursorAfter(api: ShiriProcess, key: string, path: string, pages: number): Promise<string> {
  let cursor = "";
  for (let i = 0; i < pages; i++) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await fetch(
      `${api.base}${path}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ""}`,
      {
        headers: { authorization: `Bearer ${key}` },
      },
    );
    cursor = ((await res.json()) as { data: { next_cursor: string } }).data.next_cursor;
  }
  return cursor;
}

async function main(): Promise<void> {
  measureCompiledUnlessTold();
  const db = await provisionBenchDatabase();
  const pool = createPool(db.url, 2);
  let api: ShiriProcess | undefined;
  try {
    await migrate(pool);
    const big = await setUpAccount(pool, "bench-big");
    const small = await setUpAccount(pool, "bench-small");
    process.stderr.write(`seeding ${MESSAGES} messages…\n`);
    const seeded = await seed(pool, big.id, small.id);
    const { rows: sizes } = await pool.query<{ account_id: string; n: number }>(
      "SELECT account_id, count(*)::int AS n FROM messages GROUP BY account_id",
    );
    const bulkId = (
      await pool.query<{ id: string }>("SELECT id FROM bulk_sends ORDER BY created_at LIMIT 1 OFFSET 100")
    ).rows[0]?.id as string;
    const { rows: sizeRows } = await pool.query<{ table: string; index: string }>(
      `SELECT pg_size_pretty(pg_table_size('messages')) AS table,
              pg_size_pretty(pg_indexes_size('messages')) AS index`,
    );
    api = await startShiriProcess({ role: "api", databaseUrl: db.url });
    const load = loadAverage();
    const key = big.key;
    const hour = new Date(Date.parse(BASE) + 12 * 3_600_000);
    const window = `since=${hour.toISOString()}&until=${new Date(hour.getTime() + 3_600_000).toISOString()}`;
    const deep = await cursorAfter(api, key, "/api/v1/sms?limit=50", 200);
    const queries: [string, string][] = [
      ["newest page, 50 per page", "/api/v1/sms?limit=50"],
      ["page 201 (cursor after 10,000 messages)", `/api/v1/sms?limit=50&cursor=${encodeURIComponent(deep)}`],
      ["newest page, 100 per page", "/api/v1/sms?limit=100"],
      ["operator=netone", "/api/v1/sms?operator=netone&limit=50"],
      ["status=failed (1 %)", "/api/v1/sms?status=failed&limit=50"],
      ["status=processing (0.02 %, sparse pages)", "/api/v1/sms?status=processing&limit=50"],
      ["to=one recipient (~30 messages)", "/api/v1/sms?to=%2B263710000123&limit=50"],
      ["bulk_id (1,000 messages)", `/api/v1/sms?bulk_id=${bulkId}&limit=50`],
      ["one hour, since/until", `/api/v1/sms?${window}&limit=50`],
      ["one hour, status=failed", `/api/v1/sms?${window}&status=failed&limit=50`],
      ["bulk lookup GET /sms/bulk/{id}", `/api/v1/sms/bulk/${bulkId}`],
      ["CSV export of a bulk (1,000 rows)", `/api/v1/sms/export.csv?bulk_id=${bulkId}`],
      ["CSV export of one hour (~68,000 rows)", `/api/v1/sms/export.csv?${window}`],
    ];
    const results: Measured[] = [];
    for (const [name, path] of queries) {
      results.push(await measure(api, pool, big, name, path));
      process.stderr.write(`  ${name}: ${JSON.stringify(results.at(-1))}\n`);
    }
    const table = markdownTable(
      ["query (account with 1.9 M messages)", "items", "HTTP p50 / p95 / max ms", "SQL p50 / p95 ms"],
      results.map((r) => [
        r.query,
        r.items,
        `${r.p50_ms} / ${r.p95_ms} / ${r.max_ms}`,
        r.sql_p50_ms === null ? "—" : `${r.sql_p50_ms} / ${r.sql_p95_ms}`,
      ]),
    );
    process.stdout.write(
      `\nseeded ${MESSAGES} messages in ${seeded.seconds} s (table ${sizeRows[0]?.table}, indexes ${sizeRows[0]?.index}); ` +
        `${RUNS} runs per query, load average before ${load}\n\n${table}\n`,
    );
    await mkdir(fileURLToPath(new URL("./results/", import.meta.url)), { recursive: true });
    await writeFile(
      RESULTS_FILE,
      `${JSON.stringify(
        {
          generated_at: new Date().toISOString(),
          source: sourceVersion(),
          machine: machine(load, { version: db.version, source: db.source }),
          messages: MESSAGES,
          per_account: sizes.map((s) => s.n).sort((a, b) => b - a),
          seed_seconds: seeded.seconds,
          table_size: sizeRows[0]?.table,
          index_size: sizeRows[0]?.index,
          runs: RUNS,
          load_average_before: load,
          results,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await api?.stop();
    await pool.end();
    await db.drop();
  }
}

await main();
