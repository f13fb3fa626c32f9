import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { createAccount } from "../src/accounts/accounts.ts";
import { addSenderId } from "../src/accounts/sender-ids.ts";
import { migrate } from "../src/db/migrate.ts";
import { createPool, type Pool, withTransaction } from "../src/db/pool.ts";
import { knob } from "./lib/knob.ts";
import { loadAverage, machine, sourceVersion } from "./lib/machine.ts";
import { type BenchDatabase, provisionBenchDatabase } from "./lib/postgres.ts";
import { benchRateLimits } from "./lib/rate-limits.ts";
import { judge, markdownTable, median, round, type Target } from "./lib/report.ts";
import {
  type ShiriProcess as ApiProcess,
  measureCompiledUnlessTold,
  startShiriProcess,
} from "./lib/shiri-process.ts";

const RESULTS_FILE = fileURLToPath(new URL("./results/intake.json", import.meta.url));
const PROFILE_DIR = fileURLToPath(new URL("./.data/prof/", import.meta.url));

const CONNECTIONS = knob("BENCH_CONNECTIONS", 50, 1, 500);
const WARMUP_SECONDS = knob("BENCH_WARMUP_SECONDS", 3, 0, 60);
const SECONDS = knob("BENCH_SECONDS", 10, 1, 120);
const BULK_RECIPIENTS = knob("BENCH_BULK_RECIPIENTS", 10_000, 1, 10_000);
const BULK_RUNS = knob("BENCH_BULK_RUNS", 3, 1, 10);
/** Items of the batch phase (issue 30: within a bulk send of as many recipients, plus 50 %). */
const BATCH_ITEMS = knob("BENCH_BATCH_ITEMS", 10_000, 1, 10_000);
/** "template" (items of variables filled into a template) or "texts" (a text of its own each). */
const BATCH_KIND = process.env.BENCH_BATCH_KIND ?? "template";
if (BATCH_KIND !== "template" && BATCH_KIND !== "texts") {
  throw new Error(`BENCH_BATCH_KIND must be "template" or "texts", got ${BATCH_KIND}`);
}
const CPU_PROF = process.env.BENCH_CPU_PROF === "1";
/** Single sends spread over this many accounts (1 = one high-volume sender, the target case). */
const ACCOUNTS = knob("BENCH_ACCOUNTS", 1, 1, 500);
/**
 * The bulk phase sends as the account that just did the single sends ("same", the realistic
 * case for one high-volume sender), or as one that sent nothing before ("fresh").
 */
const BULK_ACCOUNT = process.env.BENCH_BULK_ACCOUNT ?? "same";
if (BULK_ACCOUNT !== "same" && BULK_ACCOUNT !== "fresh") {
  throw new Error(`BENCH_BULK_ACCOUNT must be "same" or "fresh", got ${BULK_ACCOUNT}`);
}
const SENDER = "BENCH";
// 100 million USD in ten-thousandths: no phase can run out.
const BALANCE = 1_000_000_000_000;

/** Fresh planner statistics, so pg-boss's job table (and ours) are not measured half-analysed. */
async function analyze(pool: Pool): Promise<void> {
  await pool.query("ANALYZE");
}

async function setUpAccount(pool: Pool): Promise<{ accountId: string; key: string }> {
  const { account, key } = await withTransaction(pool, (tx) =>
    createAccount(tx, { name: "bench", currency: "USD", openingBalance: BALANCE }),
  );
  await withTransaction(pool, (tx) => addSenderId(tx, account.id, SENDER, "verified"));
  return { accountId: account.id, key: key.token };
}

interface SingleSendResult {
  accounts: number;
  connections: number;
  warmup_seconds: number;
  seconds: number;
  requests_per_second: number;
  latency_ms: { p50: number; p90: number; p99: number; max: number; mean: number };
  requests: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
}

async function singleSend(api: ApiProcess, keys: readonly string[], pool: Pool): Promise<SingleSendResult> {
  let nextClient = 0;
  const options: autocannon.Options = {
    url: `${api.base}/api/v1/sms`,
    method: "POST",
    connections: CONNECTIONS,
    headers: { authorization: `Bearer ${keys[0]}`, "content-type": "application/json" },
    body: JSON.stringify({ to: "+263771234567", from: SENDER, message: "Your code is 123456. Shiri bench." }),
    // Each connection sends as one of the accounts, round robin.
    setupClient: (client) => {
      const key = keys[nextClient++ % keys.length];
      client.setHeaders({ authorization: `Bearer ${key}`, "content-type": "application/json" });
    },
  };
  if (WARMUP_SECONDS > 0) await autocannon({ ...options, duration: WARMUP_SECONDS });
  await analyze(pool);
  const r = await autocannon({ ...options, duration: SECONDS });
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  return {
    accounts: keys.length,
    connections: CONNECTIONS,
    warmup_seconds: WARMUP_SECONDS,
    seconds: round(r.duration, 2),
    requests_per_second: round(r.requests.average, 0),
    latency_ms: {
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      max: r.latency.max,
      mean: round(r.latency.mean, 2),
    },
    requests: r.requests.total,
    non_2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    status_codes: statusCodes,
  };
}

interface BulkResult {
  account: "same" | "fresh";
  recipients: number;
  runs_ms: number[];
  warmup_ms: number;
  median_ms: number;
  recipients_per_second: number;
}

const PREFIXES = ["77", "78", "71", "73"];
let nextSubscriber = 1_000_000;

/** Recipients nobody was sent to before in this run, spread over the three operators. */
function freshRecipients(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `+263${PREFIXES[i % PREFIXES.length]}${nextSubscriber++}`);
}

async function oneBulk(api: ApiProcess, key: string, recipients: string[]): Promise<number> {
  const body = JSON.stringify({
    to: recipients,
    from: SENDER,
    message: "Shiri bench: one body, many recipients.",
  });
  const started = performance.now();
  const res = await fetch(`${api.base}/api/v1/sms/bulk`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  const elapsed = performance.now() - started;
  if (res.status !== 202) throw new Error(`bulk send answered ${res.status}: ${text.slice(0, 500)}`);
  const total = (JSON.parse(text) as { data: { total: number } }).data.total;
  if (total !== recipients.length) throw new Error(`bulk send accepted ${total} of ${recipients.length}`);
  return elapsed;
}

interface BatchResult {
  kind: "template" | "texts";
  items: number;
  body_bytes: number;
  runs_ms: number[];
  warmup_ms: number;
  median_ms: number;
  messages_per_second: number;
  /** Each batch run's time over the bulk run just before it. */
  run_ratios: number[];
}

/** A batch of distinct texts: a name and an amount per recipient, as a reminder run has them. */
function batchBody(recipients: readonly string[]): string {
  const messages = recipients.map((to, i) =>
    BATCH_KIND === "template"
      ? { to, variables: { name: `Customer ${i}`, amount: (i % 9_000) / 100 + 10 } }
      : { to, message: `Hi Customer ${i}, your balance is USD ${(i % 9_000) / 100 + 10}. Shiri bench.` },
  );
  return JSON.stringify({
    from: SENDER,
    ...(BATCH_KIND === "template"
      ? { template: "Hi {{name}}, your balance is USD {{amount}}. Shiri bench." }
      : {}),
    messages,
  });
}

async function oneBatch(api: ApiProcess, key: string, body: string, items: number): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${api.base}/api/v1/sms/batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  const elapsed = performance.now() - started;
  if (res.status !== 202) throw new Error(`batch send answered ${res.status}: ${text.slice(0, 500)}`);
  const total = (JSON.parse(text) as { data: { total: number } }).data.total;
  if (total !== items) throw new Error(`batch send accepted ${total} of ${items}`);
  return elapsed;
}

/**
 * The bulk and batch phases, their runs taking turns (a bulk send, then a batch, each with fresh
 * recipients and fresh statistics), so that a busy machine slows both alike and their ratio stays
 * the question: a batch of BATCH_ITEMS against a bulk send of BULK_RECIPIENTS.
 */
async function bulkAndBatch(
  api: ApiProcess,
  key: string,
  pool: Pool,
): Promise<{ bulk: BulkResult; batch: BatchResult }> {
  const bulkWarmup = await oneBulk(api, key, freshRecipients(BULK_RECIPIENTS));
  const batchWarmup = await oneBatch(api, key, batchBody(freshRecipients(BATCH_ITEMS)), BATCH_ITEMS);
  const bulkRuns: number[] = [];
  const batchRuns: number[] = [];
  let bodyBytes = 0;
  for (let i = 0; i < BULK_RUNS; i++) {
    const recipients = freshRecipients(BULK_RECIPIENTS);
    await analyze(pool);
    bulkRuns.push(await oneBulk(api, key, recipients));
    const body = batchBody(freshRecipients(BATCH_ITEMS));
    bodyBytes = Buffer.byteLength(body);
    await analyze(pool);
    batchRuns.push(await oneBatch(api, key, body, BATCH_ITEMS));
  }
  const bulkMedian = median(bulkRuns);
  const batchMedian = median(batchRuns);
  return {
    bulk: {
      account: BULK_ACCOUNT === "fresh" ? "fresh" : "same",
      recipients: BULK_RECIPIENTS,
      runs_ms: bulkRuns.map((ms) => round(ms, 1)),
      warmup_ms: round(bulkWarmup, 1),
      median_ms: round(bulkMedian, 1),
      recipients_per_second: round((BULK_RECIPIENTS / bulkMedian) * 1000, 0),
    },
    batch: {
      kind: BATCH_KIND === "texts" ? "texts" : "template",
      items: BATCH_ITEMS,
      body_bytes: bodyBytes,
      runs_ms: batchRuns.map((ms) => round(ms, 1)),
      warmup_ms: round(batchWarmup, 1),
      median_ms: round(batchMedian, 1),
      messages_per_second: round((BATCH_ITEMS / batchMedian) * 1000, 0),
      run_ratios: batchRuns.map((ms, i) => round(ms / (bulkRuns[i] ?? ms), 2)),
    },
  };
}

/** The database (this run's own) agrees with what the API answered: every 202 is a stored message. */
async function storedMessages(pool: Pool): Promise<{ single: number; bulk: number }> {
  const { rows } = await pool.query<{ single: number; bulk: number }>(
    `SELECT count(*) FILTER (WHERE bulk_id IS NULL)::int AS single,
            count(*) FILTER (WHERE bulk_id IS NOT NULL)::int AS bulk
       FROM messages`,
  );
  return rows[0] ?? { single: 0, bulk: 0 };
}

async function main(): Promise<void> {
  measureCompiledUnlessTold();
  const cleanups: Array<() => Promise<void>> = [];
  const cleanUp = async () => {
    for (const step of cleanups.splice(0).reverse()) await step().catch((err) => console.error(err));
  };
  process.once("SIGINT", () => {
    console.error("interrupted: stopping what the bench started");
    void cleanUp().then(() => process.exit(130));
  });

  const loadBefore = loadAverage();
  const source = sourceVersion();
  try {
    const db: BenchDatabase = await provisionBenchDatabase();
    cleanups.push(db.drop);
    const pool = createPool(db.url, 4);
    cleanups.push(() => pool.end());
    await migrate(pool);
    const accounts: Array<{ accountId: string; key: string }> = [];
    for (let i = 0; i < ACCOUNTS; i++) accounts.push(await setUpAccount(pool));
    const bulkAccount = BULK_ACCOUNT === "fresh" ? await setUpAccount(pool) : accounts[0];
    if (!bulkAccount) throw new Error("no account for the bulk phase");

    if (CPU_PROF) await mkdir(PROFILE_DIR, { recursive: true });
    const api = await startShiriProcess({
      role: "api",
      databaseUrl: db.url,
      env: benchRateLimits(),
      nodeFlags: CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", PROFILE_DIR] : [],
    });
    cleanups.push(api.stop);
    await analyze(pool);
    console.error(`api pid ${api.pid} at ${api.base}; Postgres ${db.version} (${db.source})`);

    console.error(`single send: ${WARMUP_SECONDS} s warm-up, ${SECONDS} s at ${CONNECTIONS} connections…`);
    const single = await singleSend(
      api,
      accounts.map((a) => a.key),
      pool,
    );

    console.error(
      `bulk send of ${BULK_RECIPIENTS} and batch (${BATCH_KIND}) of ${BATCH_ITEMS}, taking turns: 1 warm-up + ${BULK_RUNS} runs each…`,
    );
    const { bulk, batch } = await bulkAndBatch(api, bulkAccount.key, pool);
    const stored = await storedMessages(pool);
    // A batch is a bulk send whose messages carry their own texts: counted with the bulk sends.
    const expectedBulk = (BULK_RECIPIENTS + BATCH_ITEMS) * (BULK_RUNS + 1);
    if (stored.bulk !== expectedBulk) {
      throw new Error(`expected ${expectedBulk} bulk and batch messages stored, found ${stored.bulk}`);
    }
    // Requests still in flight when autocannon stops are finished by the server: at least every 2xx.
    const answered202 = single.status_codes["202"] ?? 0;
    if (stored.single < answered202) {
      throw new Error(`${answered202} single sends answered 202 but ${stored.single} stored`);
    }

    const targets: Target[] = [
      {
        name: "single send throughput",
        direction: "≥",
        target: 1_500,
        actual: single.requests_per_second,
        unit: "req/s",
      },
      {
        name: "single send p99 latency",
        direction: "≤",
        target: 50,
        actual: single.latency_ms.p99,
        unit: "ms",
      },
      {
        name: `${BULK_RECIPIENTS}-recipient bulk accepted (median)`,
        direction: "≤",
        target: 500,
        actual: bulk.median_ms,
        unit: "ms",
      },
      {
        // Issue 30: a batch of as many messages within the bulk send's time plus 50 %.
        name: `${BATCH_ITEMS}-message batch (${batch.kind}) accepted (median), vs bulk × 1.5`,
        direction: "≤",
        target: round(bulk.median_ms * 1.5 * (BATCH_ITEMS / BULK_RECIPIENTS), 1),
        actual: batch.median_ms,
        unit: "ms",
      },
    ];
    const judged = targets.map((t) => ({ ...t, ...judge(t) }));

    const result = {
      generated_at: new Date().toISOString(),
      command: "node --import tsx bench/intake.ts",
      source,
      machine: machine(loadBefore, { version: db.version, source: db.source }),
      service: { process: "node bin/shiri.mjs start --role api", log_level: "warn", simulators: false },
      single_send: single,
      stored_messages: stored,
      bulk_send: bulk,
      batch_send: batch,
      targets: judged,
    };
    await mkdir(fileURLToPath(new URL("./results/", import.meta.url)), { recursive: true });
    await writeFile(RESULTS_FILE, `${JSON.stringify(result, null, 2)}\n`);

    const rows = [
      ["single send throughput", `${single.requests_per_second} req/s`],
      [
        "single send latency p50 / p90 / p99",
        `${single.latency_ms.p50} / ${single.latency_ms.p90} / ${single.latency_ms.p99} ms`,
      ],
      [
        "single send requests / non-2xx / errors",
        `${single.requests} / ${single.non_2xx} / ${single.errors}`,
      ],
      [
        `bulk ${BULK_RECIPIENTS} accept (${bulk.account} account), median of ${BULK_RUNS}`,
        `${bulk.median_ms} ms (runs ${bulk.runs_ms.join(", ")})`,
      ],
      ["bulk recipients/s", `${bulk.recipients_per_second}`],
      [
        `batch ${BATCH_ITEMS} (${batch.kind}, ${round(batch.body_bytes / 1024, 0)} KiB) accept, median of ${BULK_RUNS}`,
        `${batch.median_ms} ms (runs ${batch.runs_ms.join(", ")})`,
      ],
      ["batch run / bulk run before it", batch.run_ratios.join(", ")],
    ];
    process.stdout.write(`\n${markdownTable(["measure", "value"], rows)}\n\n`);
    process.stdout.write(
      `${markdownTable(
        ["target", "goal", "actual", "met", "margin"],
        judged.map((t) => [
          t.name,
          `${t.direction} ${t.target} ${t.unit}`,
          `${t.actual} ${t.unit}`,
          t.met ? "yes" : "no",
          t.margin,
        ]),
      )}\n\nwritten to ${RESULTS_FILE}\n`,
    );
  } finally {
    await cleanUp();
  }
}

await main();
