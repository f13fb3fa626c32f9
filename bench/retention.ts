import { migrate } from "../src/db/migrate.ts";
import { createPool } from "../src/db/pool.ts";
import {
  DEFAULT_CHUNK,
  DEFAULT_PAUSE_MS,
  type RetentionPolicy,
  runRetention,
} from "../src/retention/retention.ts";
import { SENDER, setUpAccount } from "./dispatch-lib/harness.ts";
import { provisionBenchDatabase } from "./lib/postgres.ts";
import { round } from "./lib/report.ts";
import { measureCompiledUnlessTold, startShiriProcess } from "./lib/shiri-process.ts";
import type { StepProgress } from "./report/progress.ts";
import { failures, latencyOf, load } from "./scenarios/load.ts";

/**
 * Does a retention run block the send path? A fresh database is seeded with old final messages
 * (each with a part, received 100 days ago), then single sends run three times against the API
 * in a child process: alone, while the retention pass deletes the old rows (the same code and
 * chunking the worker uses, here in the bench process), and alone again. Meanwhile the bench
 * samples pg_stat_activity for backends waiting on a lock.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx bench/retention.ts
 *
 * Knobs: BENCH_RETENTION_MESSAGES (200000 seeded), BENCH_SECONDS (10 per phase), BENCH_CONNECTIONS (20).
 */
const SEEDED = Number(process.env.BENCH_RETENTION_MESSAGES ?? 200_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const POLICY: RetentionPolicy = {
  messageDays: 90,
  webhookEventDays: 30,
  idempotencyHours: 24,
  chunk: DEFAULT_CHUNK,
  pauseMs: DEFAULT_PAUSE_MS,
};
const quiet: StepProgress = { update() {}, done() {} };

measureCompiledUnlessTold();
const db = await provisionBenchDatabase();
const pool = createPool(db.url, 4);
const stops: Array<() => Promise<void>> = [async () => db.drop(), async () => pool.end()];
try {
  await migrate(pool);
  const account = await setUpAccount(pool);
  const started = performance.now();
  for (let from = 0; from < SEEDED; from += 50_000) {
    const n = Math.min(50_000, SEEDED - from);
    await pool.query(
      `WITH m AS (
         INSERT INTO messages (id, account_id, "to", body, sender_id, operator, encoding, segments, charge,
                               charge_currency, operator_response, status, billing, received_at, created_at,
                               updated_at, accepted_at, delivered_at)
         SELECT gen_random_uuid(), $1, '+263771234567', 'an old message kept for its retention window', $2,
                'econet', 'gsm7', 1, 450, 'USD', 'DELIVRD', 'success', 'captured', t, t, t, t, t
           FROM (SELECT now() - interval '100 days' + i * interval '10 ms' AS t FROM generate_series(1, $3) i) s
         RETURNING id, received_at)
       INSERT INTO message_parts (message_id, part_no, link, smsc_id, accepted_at, receipt_state, receipt_at)
       SELECT id, 1, 'econet', (random() * 1e12)::bigint::text, received_at, 'DELIVRD', received_at FROM m`,
      [account.accountId, SENDER, n],
    );
  }
  await pool.query("VACUUM ANALYZE messages, message_parts");
  const seedSeconds = (performance.now() - started) / 1000;

  const api = await startShiriProcess({ role: "api", databaseUrl: db.url });
  stops.push(api.stop);
  const send = (duration: number) =>
    load(
      {
        url: `${api.base}/api/v1/sms`,
        method: "POST",
        connections: CONNECTIONS,
        duration,
        headers: { authorization: `Bearer ${account.key}`, "content-type": "application/json" },
        body: JSON.stringify({ to: "+263771234567", from: SENDER, message: "Your code is 123456." }),
      },
      quiet,
      { from: 0, to: 1 },
    );

  /** Backends of this database seen waiting on a lock, sampled every 50 ms while `during` runs. */
  async function lockWaits<T>(
    during: Promise<T>,
  ): Promise<{ result: T; samples: number; waiting: string[] }> {
    let done = false;
    const waiting: string[] = [];
    let samples = 0;
    const sampler = (async () => {
      while (!done) {
        const { rows } = await pool.query<{ query: string }>(
          `SELECT left(query, 60) AS query FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        samples++;
        for (const r of rows) waiting.push(r.query);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const result = await during;
    done = true;
    await sampler;
    return { result, samples, waiting };
  }

  await send(2); // warm-up
  const phases: Array<{
    phase: string;
    run: Awaited<ReturnType<typeof send>>;
    waits: string[];
    samples: number;
  }> = [];
  const alone = await lockWaits(send(SECONDS));
  phases.push({ phase: "sends alone", run: alone.result, waits: alone.waiting, samples: alone.samples });

  let deleted = 0;
  let retentionSeconds = 0;
  let sending = true;
  const retention = (async () => {
    const t0 = performance.now();
    while (sending) {
      const pass = await runRetention(pool, POLICY, () => !sending);
      deleted += pass?.messages ?? 0;
      if ((pass?.messages ?? 0) === 0) break;
    }
    retentionSeconds = (performance.now() - t0) / 1000;
  })();
  const beside = await lockWaits(
    send(SECONDS).finally(() => {
      sending = false;
    }),
  );
  await retention;
  phases.push({
    phase: "sends + retention",
    run: beside.result,
    waits: beside.waiting,
    samples: beside.samples,
  });
  const after = await lockWaits(send(SECONDS));
  phases.push({
    phase: "sends alone, after",
    run: after.result,
    waits: after.waiting,
    samples: after.samples,
  });

  const left = (
    await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE received_at < now() - interval '90 days'",
    )
  ).rows[0]?.n;
  console.log(
    `\nseeded ${SEEDED} old messages (+ a part each) in ${round(seedSeconds, 1)} s; ${db.source} Postgres ${db.version}`,
  );
  console.log(
    `retention: ${deleted} messages (+ parts) deleted in ${round(retentionSeconds, 1)} s = ${round(deleted / retentionSeconds, 0)} msg/s beside the sends (it stops with them), chunk ${POLICY.chunk}, pause ${POLICY.pauseMs} ms; ${left} old left\n`,
  );
  console.log(
    "| phase | single sends req/s | p50 / p99 / max ms | non-2xx + errors | lock waits seen (samples) |",
  );
  console.log("| --- | --- | --- | --- | --- |");
  for (const p of phases) {
    const l = latencyOf(p.run);
    console.log(
      `| ${p.phase} | ${round(p.run.requests.average, 0)} | ${l.p50} / ${l.p99} / ${l.max} | ${failures(p.run)} | ${p.waits.length} (${p.samples}) |`,
    );
  }
  const waits = phases.flatMap((p) => p.waits);
  if (waits.length > 0) console.log(`\nwaiting statements: ${JSON.stringify([...new Set(waits)])}`);
} finally {
  for (const stop of stops.reverse()) await stop().catch((err: unknown) => console.error(String(err)));
}
