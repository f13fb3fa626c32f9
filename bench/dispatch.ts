/**
 * The dispatch benchmark: how fast ONE worker process moves messages from the queue to the
 * carrier and applies their receipts. It starts everything it needs — a fresh database per
 * scenario (DATABASE_URL's server, else an embedded Postgres under bench/.data), the API in a
 * child process to enqueue through bulk sends, the carrier simulators in this process on
 * ephemeral loopback ports, and one `shiri start --role worker` child — measures, prints a
 * Markdown table, writes bench/results/dispatch.json, and stops everything it started.
 *
 *   node --import tsx bench/dispatch.ts
 *
 * Scenarios (BENCH_SCENARIOS, comma-separated, default both):
 * - unlimited: BENCH_MESSAGES (20000) spread over the three operators are enqueued before the
 *   worker starts (then ANALYZE); no TPS limit. Rate from the first to the last `success`
 *   (accepted_at) and from the first to the last receipt applied (delivered_at). Target ≥ 2,000/s.
 * - tps: one operator (BENCH_TPS_OPERATOR, econet) with SMPP_<OP>_TPS_LIMIT = L (BENCH_TPS_LIMIT,
 *   200) in the worker and the same limit in its simulator; L × BENCH_TPS_SECONDS (15) messages.
 *   Steady rate from the simulator's accept times (first and last second left out), and the most
 *   accepts in any sliding second. Targets: within 5 % of L, never above L.
 * Other knobs: BENCH_RECEIPT_DELAY_MS (50), BENCH_TIMEOUT_SECONDS (300 per scenario),
 * BENCH_CPU_PROF=1 (profile the worker into bench/.data/prof-dispatch), BENCH_PG_SAMPLE=1
 * (sample pg_stat_activity during the unlimited run). The service's own settings pass through
 * from the environment: DISPATCH_BATCH_SIZE, DISPATCH_MAX_IN_FLIGHT, SMPP_<OP>_WINDOW_SIZE,
 * PG_POOL_MAX, DISPATCH_POLL_MS …
 */
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { OPERATORS, type Operator } from "../carriers/index.ts";
import type { RunningSimulators } from "../carriers/simulator/index.ts";
import type { Pool } from "../src/db/pool.ts";
import { backendCpu, backendCpuUsed, cpuSeconds } from "./dispatch-lib/cpu.ts";
import { enqueue, smppEnv, startBenchSimulators, waitForBinds } from "./dispatch-lib/harness.ts";
import { type PgSample, startPgSampler } from "./dispatch-lib/pg-sampler.ts";
import { maxInWindow, percentile, perSecond, steadyRate } from "./dispatch-lib/stats.ts";
import { Cleanup } from "./lib/cleanup.ts";
import { knob } from "./lib/knob.ts";
import { loadAverage, machine, sourceVersion } from "./lib/machine.ts";
import type { BenchDatabase } from "./lib/postgres.ts";
import { judge, markdownTable, round, type Target } from "./lib/report.ts";
import {
  measureCompiledUnlessTold,
  startShiriProcess,
  type ShiriProcess as WorkerProcess,
} from "./lib/shiri-process.ts";
import { startEnv } from "./scenarios/env.ts";

const RESULTS_FILE = fileURLToPath(new URL("./results/dispatch.json", import.meta.url));
const PROFILE_DIR = fileURLToPath(new URL("./.data/prof-dispatch/", import.meta.url));
const COMMAND = "node --import tsx bench/dispatch.ts";

const MESSAGES = knob("BENCH_MESSAGES", 20_000, 100, 100_000);
const TPS_LIMIT = knob("BENCH_TPS_LIMIT", 200, 5, 2_000);
const TPS_SECONDS = knob("BENCH_TPS_SECONDS", 15, 4, 60);
const RECEIPT_DELAY_MS = knob("BENCH_RECEIPT_DELAY_MS", 50, 0, 5_000);
const TIMEOUT_MS = knob("BENCH_TIMEOUT_SECONDS", 300, 10, 1_800) * 1000;
const CPU_PROF = process.env.BENCH_CPU_PROF === "1";
const PG_SAMPLE = process.env.BENCH_PG_SAMPLE === "1";
const TPS_OPERATOR = (process.env.BENCH_TPS_OPERATOR ?? "econet") as Operator;
if (!OPERATORS.includes(TPS_OPERATOR)) throw new Error(`BENCH_TPS_OPERATOR must be one of ${OPERATORS}`);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? "unlimited,tps").split(",").map((s) => s.trim());
for (const s of SCENARIOS) if (s !== "unlimited" && s !== "tps") throw new Error(`unknown scenario ${s}`);

/** The service settings this run was made with (inherited by the API and worker children). */
const SERVICE_KNOBS = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) =>
      /^(DISPATCH_|PG_POOL_MAX$|BIND_|RECEIPT_)/.test(k) || /^SMPP_[A-Z]+_(WINDOW_SIZE|TPS_LIMIT)$/.test(k),
  ),
) as Record<string, string>;

const log = (line: string) => process.stderr.write(`${line}\n`);

let current: Cleanup | null = null;
process.once("SIGINT", () => {
  log("interrupted: stopping what the bench started");
  void (current?.run() ?? Promise.resolve()).then(() => process.exit(130));
});

interface Prepared {
  scope: Cleanup;
  db: BenchDatabase;
  pool: Pool;
  enqueue_ms: number;
}

/** A fresh database with `n` messages enqueued through the API (stopped afterwards), then analysed. */
async function prepare(n: number, operators: readonly Operator[]): Promise<Prepared> {
  const scope = new Cleanup();
  current = scope;
  try {
    const env = await startEnv(scope);
    log(`enqueueing ${n} messages (${operators.join(", ")}) through bulk sends to ${env.base}…`);
    const sent = await enqueue(env.base, env.key, n, operators);
    // The API is not needed any more: it must not compete with the worker for the CPU.
    await env.api.stop();
    // pg-boss fetches crawl on a job table nobody analysed after a large insert (stack notes).
    await env.pool.query("ANALYZE");
    return { scope, db: env.db, pool: env.pool, enqueue_ms: round(sent.ms, 0) };
  } catch (err) {
    await scope.run();
    throw err;
  }
}

interface Counts {
  success: number;
  failed: number;
  delivered: number;
}

async function counts(pool: Pool): Promise<Counts> {
  const { rows } = await pool.query<Counts>(
    `SELECT count(*) FILTER (WHERE status = 'success')::int AS success,
            count(*) FILTER (WHERE status = 'failed')::int AS failed,
            count(*) FILTER (WHERE delivered_at IS NOT NULL)::int AS delivered
       FROM messages`,
  );
  return rows[0] ?? { success: 0, failed: 0, delivered: 0 };
}

interface Sample extends Counts {
  t_ms: number;
}

/** Polls the counts every 250 ms until every message is final and, if asked, delivered. */
async function pollUntilDone(
  pool: Pool,
  n: number,
  worker: WorkerProcess,
  opts: { delivered: boolean },
): Promise<{ samples: Sample[]; timedOut: boolean }> {
  const started = performance.now();
  const samples: Sample[] = [];
  let lastLog = 0;
  for (;;) {
    const c = await counts(pool);
    const t = performance.now() - started;
    samples.push({ t_ms: Math.round(t), ...c });
    const done = c.success + c.failed >= n && (!opts.delivered || c.delivered >= c.success);
    if (done) return { samples, timedOut: false };
    if (t > TIMEOUT_MS) return { samples, timedOut: true };
    if (worker.exited()) throw new Error(`worker exited during the run:\n${worker.output()}`);
    if (t - lastLog >= 2_000) {
      lastLog = t;
      log(
        `  ${(t / 1000).toFixed(1)} s: success ${c.success}, failed ${c.failed}, delivered ${c.delivered} of ${n}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Rate between the first sample that saw any and the first that saw all: the 250 ms poll's view. */
function polledRate(samples: readonly Sample[], field: keyof Counts, total: number): number | null {
  const first = samples.find((s) => s[field] > 0);
  const last = samples.find((s) => s[field] >= total);
  if (!first || !last || last.t_ms <= first.t_ms) return null;
  return round((total - first[field]) / ((last.t_ms - first.t_ms) / 1000), 0);
}

async function epochs(pool: Pool, column: "accepted_at" | "delivered_at"): Promise<number[]> {
  const { rows } = await pool.query<{ ms: number }>(
    `SELECT (extract(epoch FROM ${column}) * 1000)::float8 AS ms FROM messages WHERE ${column} IS NOT NULL ORDER BY 1`,
  );
  return rows.map((r) => r.ms);
}

function rateOf(sortedMs: readonly number[]): { per_second: number; seconds: number; count: number } {
  const count = sortedMs.length;
  const seconds = count > 1 ? ((sortedMs[count - 1] as number) - (sortedMs[0] as number)) / 1000 : 0;
  return { per_second: seconds > 0 ? round(count / seconds, 0) : 0, seconds: round(seconds, 2), count };
}

async function startWorker(
  databaseUrl: string,
  sims: RunningSimulators,
  operators: readonly Operator[],
  env: Record<string, string>,
  label: string,
): Promise<WorkerProcess> {
  if (CPU_PROF) await mkdir(PROFILE_DIR, { recursive: true });
  const worker = await startShiriProcess({
    role: "worker",
    databaseUrl,
    env: { ...smppEnv(sims.ports), ...env },
    // One file per thread (the main one and tsx's loader thread), named by node: no --cpu-prof-name.
    nodeFlags: CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", `${PROFILE_DIR}${label}`] : [],
  });
  log(`worker pid ${worker.pid} (metrics on ${worker.metricsPort})`);
  await waitForBinds(sims, operators, 30_000);
  return worker;
}

async function unlimited() {
  const operators = OPERATORS;
  const { scope, db, pool, enqueue_ms } = await prepare(MESSAGES, operators);
  try {
    const sims = await startBenchSimulators(
      Object.fromEntries(operators.map((op) => [op, { receiptDelayMs: RECEIPT_DELAY_MS, tpsLimit: 0 }])),
    );
    scope.add(() => sims.stop());
    const noLimit = Object.fromEntries(operators.map((op) => [`SMPP_${op.toUpperCase()}_TPS_LIMIT`, "0"]));
    const worker = await startWorker(db.url, sims, operators, noLimit, "unlimited");
    scope.add(worker.stop);
    const workerCpuBefore = cpuSeconds(worker.pid);
    const pgCpuBefore = await backendCpu(pool);
    const sampler = PG_SAMPLE ? startPgSampler(pool) : null;
    const wallStart = performance.now();
    log(`unlimited: ${MESSAGES} messages through one worker…`);
    const { samples, timedOut } = await pollUntilDone(pool, MESSAGES, worker, { delivered: true });
    const wallSeconds = (performance.now() - wallStart) / 1000;
    const pgSamples: PgSample[] | null = sampler ? await sampler.stop() : null;
    const workerCpuAfter = cpuSeconds(worker.pid);
    const pgCpu = backendCpuUsed(pgCpuBefore, await backendCpu(pool));
    await worker.stop();

    const accepted = await epochs(pool, "accepted_at");
    const delivered = await epochs(pool, "delivered_at");
    const { rows: lat } = await pool.query<{ ms: number }>(
      `SELECT (extract(epoch FROM delivered_at - accepted_at) * 1000)::float8 AS ms
         FROM messages WHERE delivered_at IS NOT NULL ORDER BY 1`,
    );
    const latency = lat.map((r) => r.ms);
    const final = await counts(pool);
    const simAccepted = Object.fromEntries(operators.map((op) => [op, sims.get(op).accepted.length]));
    const totalSimAccepted = Object.values(simAccepted).reduce((a, b) => a + b, 0);
    const firstAccept = accepted[0] ?? 0;
    return {
      messages: MESSAGES,
      operators,
      receipt_delay_ms: RECEIPT_DELAY_MS,
      postgres: { version: db.version, source: db.source },
      enqueue_ms,
      timed_out: timedOut,
      final: final,
      simulator_accepted: {
        ...simAccepted,
        total: totalSimAccepted,
        duplicates: totalSimAccepted - MESSAGES,
      },
      success: rateOf(accepted),
      receipts_applied: rateOf(delivered),
      polled_rate: {
        success_per_second: polledRate(samples, "success", MESSAGES),
        delivered_per_second: polledRate(samples, "delivered", MESSAGES),
      },
      /** From the worker being ready (bound) to the last receipt applied. */
      wall_seconds: round(wallSeconds, 2),
      accepted_to_delivered_ms: {
        p50: round(percentile(latency, 50), 0),
        p90: round(percentile(latency, 90), 0),
        p95: round(percentile(latency, 95), 0),
        p99: round(percentile(latency, 99), 0),
        /** Receipts that overtook their settle transaction wait for the early-receipt sweep. */
        over_1s: latency.filter((ms) => ms > 1_000).length,
        max: round(latency[latency.length - 1] ?? Number.NaN, 0),
      },
      timeline_per_second: {
        /** Seconds counted from the first success. */
        success: bucketFrom(accepted, firstAccept),
        delivered: bucketFrom(delivered, firstAccept),
      },
      cpu_seconds: {
        worker:
          workerCpuBefore !== null && workerCpuAfter !== null
            ? round(workerCpuAfter - workerCpuBefore, 2)
            : null,
        postgres_backends: pgCpu === null ? null : round(pgCpu, 2),
        wall: round(wallSeconds, 2),
      },
      pg_activity: pgSamples,
      samples_every_250ms: samples,
    };
  } finally {
    await scope.run();
  }
}

/** Per-second counts measured from a given origin (so two series line up). */
function bucketFrom(sortedMs: readonly number[], origin: number): number[] {
  const out: number[] = [];
  for (const t of sortedMs) {
    const s = Math.max(0, Math.floor((t - origin) / 1000));
    while (out.length <= s) out.push(0);
    out[s] = (out[s] as number) + 1;
  }
  return out;
}

async function tpsLimited() {
  const op = TPS_OPERATOR;
  const n = TPS_LIMIT * TPS_SECONDS;
  const { scope, db, pool, enqueue_ms } = await prepare(n, [op]);
  try {
    const sims = await startBenchSimulators({
      [op]: { receiptDelayMs: RECEIPT_DELAY_MS, tpsLimit: TPS_LIMIT },
    });
    scope.add(() => sims.stop());
    const env = { [`SMPP_${op.toUpperCase()}_TPS_LIMIT`]: String(TPS_LIMIT) };
    const worker = await startWorker(db.url, sims, [op], env, "tps");
    scope.add(worker.stop);
    log(`tps: ${n} messages to ${op} at a limit of ${TPS_LIMIT}/s…`);
    const { timedOut } = await pollUntilDone(pool, n, worker, { delivered: false });
    await worker.stop();
    const sim = sims.get(op);
    const times = sim.accepted.map((a) => a.at.getTime()).sort((a, b) => a - b);
    const steady = steadyRate(times);
    const throttled = sim.rejections.filter((r) => r.command_status === 0x58).length;
    const final = await counts(pool);
    return {
      operator: op,
      tps_limit: TPS_LIMIT,
      messages: n,
      postgres: { version: db.version, source: db.source },
      enqueue_ms,
      timed_out: timedOut,
      final,
      simulator_accepted: times.length,
      throttled_by_simulator: throttled,
      overall: rateOf(times),
      steady: steady
        ? {
            per_second: round(steady.perSecond, 1),
            mean_of_whole_seconds: round(steady.meanOfWholeSeconds, 1),
            seconds: round(steady.seconds, 2),
            accepts: steady.events,
          }
        : null,
      max_in_any_second: maxInWindow(times),
      timeline_per_second: perSecond(times),
    };
  } finally {
    await scope.run();
  }
}

async function main(): Promise<void> {
  measureCompiledUnlessTold();
  const loadBefore = loadAverage();
  const results: {
    unlimited?: Awaited<ReturnType<typeof unlimited>>;
    tps?: Awaited<ReturnType<typeof tpsLimited>>;
  } = {};
  if (SCENARIOS.includes("unlimited")) results.unlimited = await unlimited();
  if (SCENARIOS.includes("tps")) results.tps = await tpsLimited();

  const targets: Target[] = [];
  const u = results.unlimited;
  if (u) {
    targets.push(
      {
        name: "accepted → success, one worker",
        direction: "≥",
        target: 2_000,
        actual: u.success.per_second,
        unit: "msg/s",
      },
      {
        name: "receipts applied (delivered_at)",
        direction: "≥",
        target: 2_000,
        actual: u.receipts_applied.per_second,
        unit: "msg/s",
      },
    );
  }
  const t = results.tps;
  if (t) {
    targets.push(
      {
        name: `steady rate at TPS limit ${t.tps_limit} (≥ L − 5 %)`,
        direction: "≥",
        target: round(t.tps_limit * 0.95, 1),
        actual: t.steady?.per_second ?? 0,
        unit: "msg/s",
      },
      {
        name: `steady rate at TPS limit ${t.tps_limit} (≤ L)`,
        direction: "≤",
        target: t.tps_limit,
        actual: t.steady?.per_second ?? Number.POSITIVE_INFINITY,
        unit: "msg/s",
      },
      {
        name: "most accepts in any sliding second (≤ L)",
        direction: "≤",
        target: t.tps_limit,
        actual: t.max_in_any_second,
        unit: "msg",
      },
    );
  }
  const judged = targets.map((x) => ({ ...x, ...judge(x) }));
  const pg = u?.postgres ?? t?.postgres ?? { version: "unknown", source: "unknown" };
  const result = {
    generated_at: new Date().toISOString(),
    command: COMMAND,
    source: sourceVersion(),
    machine: machine(loadBefore, pg),
    service: {
      worker: "node bin/shiri.mjs start --role worker (one process)",
      simulators: "in the bench process, loopback, ephemeral ports",
      settings: SERVICE_KNOBS,
    },
    ...results,
    targets: judged,
  };
  await mkdir(fileURLToPath(new URL("./results/", import.meta.url)), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(result, null, 2)}\n`);

  const rows: (string | number)[][] = [];
  if (u) {
    rows.push(
      ["messages (3 operators, enqueued before the worker starts)", u.messages],
      ["accepted → success", `${u.success.per_second} msg/s (${u.success.count} in ${u.success.seconds} s)`],
      [
        "receipts applied (delivered_at set)",
        `${u.receipts_applied.per_second} msg/s (${u.receipts_applied.count} in ${u.receipts_applied.seconds} s)`,
      ],
      [
        "same, seen by the 250 ms poll",
        `${u.polled_rate.success_per_second} / ${u.polled_rate.delivered_per_second} msg/s`,
      ],
      [
        "accepted → delivered p50 / p90 / p99",
        `${u.accepted_to_delivered_ms.p50} / ${u.accepted_to_delivered_ms.p90} / ${u.accepted_to_delivered_ms.p99} ms (${u.accepted_to_delivered_ms.over_1s} over 1 s)`,
      ],
      [
        "worker CPU / Postgres backends CPU / wall",
        `${u.cpu_seconds.worker} / ${u.cpu_seconds.postgres_backends} / ${u.cpu_seconds.wall} s`,
      ],
      ["success per second", u.timeline_per_second.success.join(", ")],
    );
  }
  if (t) {
    rows.push(
      [`TPS limit L on ${t.operator}`, `${t.tps_limit}/s, ${t.messages} messages`],
      [
        "steady rate (first and last second left out)",
        t.steady
          ? `${t.steady.per_second} msg/s (slope; whole-second mean ${t.steady.mean_of_whole_seconds}) over ${t.steady.seconds} s`
          : "run too short",
      ],
      ["most accepts in any sliding second", t.max_in_any_second],
      ["throttled by the simulator", t.throttled_by_simulator],
      ["accepts per second", t.timeline_per_second.join(", ")],
    );
  }
  process.stdout.write(`\n${markdownTable(["measure", "value"], rows)}\n\n`);
  process.stdout.write(
    `${markdownTable(
      ["target", "goal", "actual", "met", "margin"],
      judged.map((x) => [
        x.name,
        `${x.direction} ${x.target} ${x.unit}`,
        `${x.actual} ${x.unit}`,
        x.met ? "yes" : "no",
        x.margin,
      ]),
    )}\n\nwritten to ${RESULTS_FILE}\n`,
  );
}

await main();
