/**
 * The whole pipeline as a customer runs it, every stage at once: a load process sends through
 * Shiri's API process, Shiri's worker process dispatches to an SMPP sink in a process of its own,
 * the sink's receipts come back, and the account webhook (served here) takes the
 * message.delivered callbacks. Measures intake, end to end, callback latency and CPU per message,
 * and checks that every destination was submitted once and every callback received once.
 */
import { execFile } from "node:child_process";
import { getPriority } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { OPERATORS } from "../../carriers/index.ts";
import type { Pool } from "../../src/db/pool.ts";
import { cpuSeconds } from "../dispatch-lib/cpu.ts";
import { SENDER } from "../dispatch-lib/harness.ts";
import { startPgSampler } from "../dispatch-lib/pg-sampler.ts";
import { latencySummary, percentile } from "../dispatch-lib/stats.ts";
import { Cleanup } from "../lib/cleanup.ts";
import { type CpuBudget, cpuBudget } from "../lib/cpu-budget.ts";
import { knob } from "../lib/knob.ts";
import { benchRateLimits } from "../lib/rate-limits.ts";
import { round } from "../lib/report.ts";
import { type ShiriProcess, startShiriProcess } from "../lib/shiri-process.ts";
import {
  FIRST_SUBSCRIBER,
  type LoadMessage,
  type LoadPlan,
  type LoadResult,
  loadMessageSchema,
  MESSAGE,
  recipient,
  wallMs,
} from "../peers/load-protocol.ts";
import type { IdForm } from "../peers/sink-ids.ts";
import { warmUp } from "../peers/warm-up.ts";
import type { StepProgress } from "../report/progress.ts";
import { startEnv } from "../scenarios/env.ts";
import type { Measure, RunOptions, ScenarioResult } from "../scenarios/types.ts";
import { callbackStages } from "./callback-stages.ts";
import { checkCompleteness } from "./completeness.ts";
import { type PeerProcess, startPeer } from "./peer-process.ts";
import { BackendsByClient, ownServerPids, ServerCpu } from "./process-cpu.ts";
import { remoteReceiver } from "./remote-receiver.ts";
import { probeTlvMode, registerWebhook, sendBulk } from "./service-calls.ts";
import { startSinkPeer } from "./sink-peer.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.ts";

type BulkResult = Awaited<ReturnType<typeof sendBulk>>;

export interface PipelinePlan {
  name: string;
  title: string;
  mode: "single" | "bulk";
  messages: { full: number; quick: number };
  perRequest: number;
  inFlight: number;
  /** Recipients of one bulk request fired in the middle of the run, while dispatch runs (0: none). */
  bigRequest: number;
  /** API and worker processes (scale-out: the carrier then allows one bind per worker). */
  apis: number;
  workers: number;
  /**
   * A carrier at a distance instead of the sink's at-once answers: each submit answered after
   * answerDelayMs, windowSize submits in flight per bind, maxBinds binds allowed (default: one per
   * worker).
   */
  carrier?: { answerDelayMs: number; windowSize: number; maxBinds: number };
  /**
   * Each API process held to this many thousandths of a core (bench/lib/cpu-budget.ts), as a
   * replica with a CPU limit is: the API, not the machine, is then the limit.
   * BENCH_PIPELINE_API_MILLICORES sets another.
   */
  apiMillicores?: number;
  /**
   * Numbers on the account's opt-out list during the run (none of them the load's recipients, so
   * every send still goes end to end): what the send path's opt-out check costs against a list
   * that size. BENCH_PIPELINE_OPT_OUTS sets it for any pipeline scenario.
   */
  optOuts?: number;
  /**
   * Events a callback request carries (1: one request per event, as Kannel's dlr-url); absent:
   * BENCH_PIPELINE_WEBHOOK_BATCH, 100 unless set.
   */
  webhookBatchSize?: number;
  /**
   * Requests of a callback job written before their answers (WEBHOOK_PIPELINE_DEPTH); absent:
   * Shiri's default (1), or that variable as the bench's environment sets it.
   */
  webhookPipelineDepth?: number;
  /**
   * "none": the account's own rate limits set to no limit with the CLI
   * (`shiri rate-limit set --requests-per-second 0 --recipients-per-minute 0`), as a high-volume
   * sender's are; absent: only the configured defaults, raised above anything one machine sends.
   */
  accountRateLimits?: "none";
  /** The sink's message ids (peers/sink-ids.ts): numeric unless given. */
  sinkIds?: IdForm;
  /**
   * The callback receiver in the load generator's process (peers/callback-server.ts), as issue 27
   * measured Kannel and Shiri; absent: in the bench's own process.
   */
  callbacksWithLoad?: boolean;
  /**
   * Messages sent the way the load sends them before it, not measured (bench/peers/warm-up.ts);
   * absent: BENCH_PIPELINE_WARMUP, none unless set.
   */
  warmUp?: { full: number; quick: number };
}

/**
 * Fills the account's opt-out list with `count` econet numbers of the 78 prefix (the load's are
 * 77: none is ever sent to), in one statement, and has the planner see it.
 */
async function fillOptOutList(pool: Pool, accountId: string, count: number): Promise<void> {
  if (count === 0) return;
  await pool.query(
    `INSERT INTO opt_outs (account_id, number, source)
     SELECT $1, '26378' || lpad(n::text, 7, '0'), 'api' FROM generate_series(1, $2) AS n`,
    [accountId, count],
  );
  await pool.query("ANALYZE opt_outs");
}

/** Sets the account's own rate limits to no limit, with the CLI an operator runs. */
async function liftAccountRateLimits(databaseUrl: string, accountId: string): Promise<void> {
  const cli = fileURLToPath(new URL("../../bin/shiri.mjs", import.meta.url));
  await promisify(execFile)(
    process.execPath,
    [
      cli,
      "rate-limit",
      "set",
      "--account",
      accountId,
      "--requests-per-second",
      "0",
      "--recipients-per-minute",
      "0",
    ],
    { env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 60_000 },
  );
}

/** Recipient ranges (+26377 and seven digits): the probe takes 0 and 1, the load FIRST_SUBSCRIBER on. */
const BIG_FIRST_SUBSCRIBER = 5_000_000;
/** How long to keep listening after the last expected callback, for duplicates. */
const GRACE_MS = 1_000;
/** The big request goes out once half the load's callbacks are in, or this long after the load ended. */
const BIG_REQUEST_LATEST_AFTER_LOAD_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runPipeline(
  plan: PipelinePlan,
  progress: StepProgress,
  options: RunOptions,
): Promise<ScenarioResult> {
  const timeoutSeconds = knob("BENCH_PIPELINE_TIMEOUT_SECONDS", 600, 10, 3_600);
  // Off by default: polling pg_stat_activity every 20 ms costs the server CPU the run measures.
  const sampleDatabase = knob("BENCH_PIPELINE_PG_SAMPLE", 0, 0, 1) === 1;
  // Where each message's time went, read from the database after the run (callback-stages.ts).
  const readStages = knob("BENCH_PIPELINE_STAGES", 0, 0, 1) === 1;
  // V8 profiles of the api and the worker (bench/dispatch-lib/profile-summary.ts reads them).
  const profile = knob("BENCH_PIPELINE_CPU_PROF", 0, 0, 1) === 1;
  // Events a callback request carries: a receiver of thousands a second asks for batches.
  const webhookBatchSize = plan.webhookBatchSize ?? knob("BENCH_PIPELINE_WEBHOOK_BATCH", 100, 1, 100);
  const profileFlags = (role: string) =>
    profile
      ? [
          "--cpu-prof",
          "--cpu-prof-dir",
          fileURLToPath(new URL(`../.data/prof-pipeline/${plan.name}-${role}`, import.meta.url)),
        ]
      : [];
  // The sink's ids: BENCH_PIPELINE_SINK_IDS=opaque runs a scenario with issue 27's opaque ids.
  const sinkIds: IdForm =
    plan.sinkIds ?? (process.env.BENCH_PIPELINE_SINK_IDS === "opaque" ? "opaque" : "numeric");
  const planned = knob(
    "BENCH_PIPELINE_MESSAGES",
    options.quick ? plan.messages.quick : plan.messages.full,
    100,
    1_000_000,
  );
  const requests = Math.ceil(planned / plan.perRequest);
  const warmUpMessages = knob(
    "BENCH_PIPELINE_WARMUP",
    (options.quick ? plan.warmUp?.quick : plan.warmUp?.full) ?? 0,
    0,
    1_000_000,
  );
  const cleanup = new Cleanup();
  // Ctrl-C runs the bench's cleanup, which runs this one; at the end this one runs itself.
  options.cleanup?.add(() => cleanup.run());
  try {
    // The service: its own database, the API (started by startEnv) and a worker, both allowed
    // to call back to loopback.
    const serviceEnv = {
      WEBHOOK_ALLOW_PRIVATE: "true",
      ...benchRateLimits(),
      ...(plan.webhookPipelineDepth ? { WEBHOOK_PIPELINE_DEPTH: String(plan.webhookPipelineDepth) } : {}),
    };
    const env = await startEnv(cleanup, serviceEnv, profileFlags("api"));
    const optOuts = knob("BENCH_PIPELINE_OPT_OUTS", plan.optOuts ?? 0, 0, 10_000_000);
    await fillOptOutList(env.pool, env.accountId, optOuts);
    if (plan.accountRateLimits === "none") await liftAccountRateLimits(env.db.url, env.accountId);
    const sink = await startSinkPeer(cleanup, {
      answerDelayMs: plan.carrier?.answerDelayMs ?? 0,
      ids: sinkIds,
    });
    const smpp: Record<string, string> = {};
    // Every operator is pointed at the sink, so the worker holds all its binds and nothing retries
    // a refused connection during the run; only econet numbers get traffic.
    for (const op of OPERATORS) {
      const prefix = `SMPP_${op.toUpperCase()}_`;
      smpp[`${prefix}HOST`] = "127.0.0.1";
      smpp[`${prefix}PORT`] = String(sink.smppPort);
      // No id settings: the sink writes hex answers and decimal receipts (peers/sink-ids.ts), which
      // Shiri must match on its defaults, as an integrator's first link would be configured.
      smpp[`${prefix}MAX_BINDS`] = String(plan.carrier?.maxBinds ?? plan.workers);
      if (plan.carrier) smpp[`${prefix}WINDOW_SIZE`] = String(plan.carrier.windowSize);
    }
    const workers: ShiriProcess[] = [];
    for (let i = 0; i < plan.workers; i++) {
      const started = await startShiriProcess({
        role: "worker",
        databaseUrl: env.db.url,
        env: { ...serviceEnv, ...smpp },
        nodeFlags: profileFlags(`worker${i === 0 ? "" : i + 1}`),
      });
      cleanup.add(started.stop);
      workers.push(started);
    }
    const worker = workers[0] as ShiriProcess;
    // What WORKER_NICE gave it (inherited from this environment, 5 unless set).
    const workerNice = getPriority(worker.pid);
    const apis = [env.api];
    for (let i = 1; i < plan.apis; i++) {
      const started = await startShiriProcess({ role: "api", databaseUrl: env.db.url, env: serviceEnv });
      cleanup.add(started.stop);
      apis.push(started);
    }
    const budgets: CpuBudget[] = [];
    // Every budget's scheduler periods, summed: they are counted from each group's start.
    const budgetPeriods = () =>
      budgets
        .map((budget) => budget.periods())
        .reduce((sum, p) => ({ ran: sum.ran + p.ran, throttled: sum.throttled + p.throttled }), {
          ran: 0,
          throttled: 0,
        });
    const apiMillicores =
      plan.apiMillicores === undefined
        ? undefined
        : knob("BENCH_PIPELINE_API_MILLICORES", plan.apiMillicores, 50, 1_000);
    if (apiMillicores !== undefined)
      for (const [i, api] of apis.entries()) {
        const budget = cpuBudget(`api${i + 1}`, apiMillicores);
        cleanup.add(async () => budget.release());
        budget.confine(api.pid);
        budgets.push(budget);
      }
    await sink.waitForBinds(OPERATORS.length * plan.workers, 30_000);

    const loadPlan: LoadPlan = {
      bases: apis.map((a) => a.base),
      key: env.key,
      from: SENDER,
      message: MESSAGE,
      mode: plan.mode,
      requests,
      perRequest: plan.perRequest,
      inFlight: plan.inFlight,
      firstSubscriber: FIRST_SUBSCRIBER,
      ...(plan.callbacksWithLoad ? { receiver: "webhook" as const } : {}),
    };
    // Set from callbacks (IPC, the big request): a holder, so the loop below reads them fresh.
    const state: {
      responses: number;
      load: LoadResult | null;
      big: BulkResult | null;
      bigSentAt: { ms: number; callbacks: number } | null;
    } = { responses: 0, load: null, big: null, bigSentAt: null };
    const onLoadMessage = (m: LoadMessage) => {
      if (m.type === "progress") state.responses = m.responses;
      else if (m.type === "result") state.load = m;
    };
    const startLoad = () => {
      const started = startPeer("load generator", "../peers/load-generator.ts", [JSON.stringify(loadPlan)]);
      cleanup.add(started.stop);
      return started;
    };
    // The callbacks taken in the load process (started now, sending once told), or here.
    const early = plan.callbacksWithLoad ? startLoad() : null;
    const remote = early ? await remoteReceiver(early, "message.delivered", onLoadMessage) : null;
    const receiver: WebhookReceiver = remote ?? (await startWebhookReceiver());
    cleanup.add(() => receiver.stop());
    const webhook = await registerWebhook(env.base, env.key, receiver.url, webhookBatchSize);
    receiver.setSecret(webhook.secret);

    const alive = () => {
      for (const [name, p] of [
        ...apis.map((a) => ["API", a] as const),
        ...workers.map((w) => ["worker", w] as const),
      ])
        if (p.exited()) throw new Error(`the ${name} process exited:\n${p.output()}`);
      if (sink.process.exited()) throw new Error(`the SMPP sink exited:\n${sink.process.output()}`);
    };

    const probe = await probeTlvMode(env.base, env.key, receiver, worker);
    // The probe returns at its first callback; its other message must be through the sink too
    // before the counts start, or its submit lands in the measured run.
    await probeMessagesAnswered(env.pool, probe.ids);
    await sink.setMode(probe.mode);
    const warmUpIds = await warmUp({
      plan: loadPlan,
      messages: warmUpMessages,
      calledBack: (id) => receiver.delivered.has(id),
      alive,
    });
    await sink.reset();
    receiver.reset();

    // Measured from here.
    const measuredFrom = new Date();
    const shiriPids = [...apis, ...workers].map((p) => p.pid);
    const shiriBefore = shiriPids.map((pid) => cpuSeconds(pid) ?? Number.NaN);
    const periodsBefore = budgetPeriods();
    const sinkBefore = cpuSeconds(sink.process.pid) ?? Number.NaN;
    const server = await ServerCpu.find(env.pool, env.db.url);
    server?.sample();
    const ownBefore = server ? await ownServerPids(env.pool) : new Set<number>();
    // Which of Shiri's processes each backend works for: its share of Postgres's CPU.
    const backends = server
      ? new BackendsByClient(env.pool, Number(new URL(env.db.url).port || 5432), [
          ...apis.map((p) => ({ label: "api", pid: p.pid })),
          ...workers.map((p) => ({ label: "worker", pid: p.pid })),
        ])
      : null;
    await backends?.sample();
    const sampler = sampleDatabase ? startPgSampler(env.pool) : null;

    let load: PeerProcess;
    if (early && remote) {
      load = early;
      remote.start();
    } else {
      load = startLoad();
      load.child.on("message", (raw: unknown) => onLoadMessage(loadMessageSchema.parse(raw)));
    }

    const loadMessages = requests * plan.perRequest;
    const total = loadMessages + plan.bigRequest;
    let bigSending: Promise<void> | null = null;
    const deadline = performance.now() + timeoutSeconds * 1_000;
    let timedOut = false;
    let lastSample = performance.now();
    for (;;) {
      alive();
      if (!state.load && load.exited())
        throw new Error(`the load generator ended without a result:\n${load.output()}`);
      const callbacks = receiver.delivered.size;
      if (plan.bigRequest > 0 && !bigSending) {
        const half = callbacks >= loadMessages / 2;
        const late =
          state.load !== null && wallMs() - state.load.finishedAtMs >= BIG_REQUEST_LATEST_AFTER_LOAD_MS;
        if (half || late) {
          state.bigSentAt = { ms: wallMs(), callbacks };
          const to = Array.from({ length: plan.bigRequest }, (_, i) => recipient(BIG_FIRST_SUBSCRIBER + i));
          bigSending = sendBulk(env.base, env.key, to, SENDER, MESSAGE).then((r) => {
            state.big = r;
          });
        }
      }
      progress.update(
        (state.responses / requests) * 0.2 + (callbacks / total) * 0.8,
        `${state.responses}/${requests} requests, ${callbacks}/${total} callbacks`,
      );
      if (state.load && (plan.bigRequest === 0 || state.big)) {
        const expected = [...state.load.accepted, ...(state.big?.accepted ?? [])];
        if (expected.every(([id]) => receiver.delivered.has(id))) break;
      }
      if (performance.now() > deadline) {
        timedOut = true;
        break;
      }
      if (performance.now() - lastSample >= 1_000) {
        server?.sample();
        await backends?.sample();
        lastSample = performance.now();
      }
      await sleep(50);
    }
    // CPU up to the last callback; then a grace period in which duplicates may still show.
    const usedBy = shiriPids.map(
      (pid, i) => (cpuSeconds(pid) ?? Number.NaN) - (shiriBefore[i] ?? Number.NaN),
    );
    const shiriUsed = usedBy.reduce((sum, used) => sum + used, 0);
    const apiUsed = usedBy.slice(0, apis.length).reduce((sum, used) => sum + used, 0);
    const periodsNow = budgetPeriods();
    const periods = {
      ran: periodsNow.ran - periodsBefore.ran,
      throttled: periodsNow.throttled - periodsBefore.throttled,
    };
    const sinkUsed = (cpuSeconds(sink.process.pid) ?? Number.NaN) - sinkBefore;
    server?.sample();
    await backends?.sample();
    const ownPids = server
      ? new Set([...ownBefore, ...(await ownServerPids(env.pool)), ...(backends?.all() ?? [])])
      : null;
    const postgresUsed = server ? server.used() : null;
    const postgresFor = (label: string) => {
      const pids = backends?.of(label);
      return server && pids && pids.size > 0 ? server.used(pids) : null;
    };
    const postgresOwnUsed = server && ownPids ? server.used(ownPids) : null;
    const pgBusy = await sampler?.stop();
    await bigSending;
    const loadDone = state.load;
    if (!loadDone)
      throw new Error(`the load generator did not finish in ${timeoutSeconds} s:\n${load.output()}`);
    await sleep(GRACE_MS);

    const big = state.big;
    const accepted = [...loadDone.accepted, ...(big?.accepted ?? [])];
    const check = await checkCompleteness({
      accepted,
      planned: total,
      requestFailures: loadDone.failed + (big && !big.ok ? 1 : 0),
      sink: await sink.counts(),
      receiver,
      ignoredIds: new Set([...probe.ids, ...warmUpIds]),
      pool: env.pool,
    });

    const stages = readStages ? await callbackStages(env.pool, measuredFrom) : undefined;

    // Per message, from its request's answer to its (first) message.delivered callback.
    const firstCallback = new Map<string, number>();
    for (const [id] of accepted) {
      const t = receiver.delivered.get(id)?.[0];
      if (t !== undefined) firstCallback.set(id, t);
    }
    const latencies = accepted
      .filter(([id]) => firstCallback.has(id))
      .map(([id, , at]) => (firstCallback.get(id) as number) - at)
      .sort((a, b) => a - b);
    const delivered = firstCallback.size;
    let lastCallback = loadDone.startedAtMs;
    for (const t of firstCallback.values()) lastCallback = Math.max(lastCallback, t);
    const spanSeconds = (lastCallback - loadDone.startedAtMs) / 1_000;
    // No callback at all: nothing went through end to end (and the run is incomplete).
    const endToEnd = delivered > 0 && spanSeconds > 0 ? round(delivered / spanSeconds, 0) : 0;
    const loadSeconds = (loadDone.finishedAtMs - loadDone.startedAtMs) / 1_000;
    const perMessage = (seconds: number | null) =>
      seconds === null || !Number.isFinite(seconds) || accepted.length === 0
        ? null
        : round((seconds * 1_000) / accepted.length, 3);
    const cpuShiri = perMessage(shiriUsed);
    const cpuPostgres = perMessage(postgresUsed);
    const measure = (label: string, value: number | null, unit: string): Measure => ({ label, value, unit });
    const measures: Record<string, Measure> = {
      accepted_req_per_s: measure(
        "requests accepted per second",
        round(loadDone.requests / loadSeconds, 0),
        "req/s",
      ),
      accepted_msg_per_s: measure(
        "messages accepted per second",
        round(loadDone.accepted.length / loadSeconds, 0),
        "msg/s",
      ),
      accept_p50_ms: measure("accept latency p50", loadDone.latencyMs.p50, "ms"),
      accept_p99_ms: measure("accept latency p99", loadDone.latencyMs.p99, "ms"),
      e2e_msg_per_s: measure("end to end, first request → last delivery callback", endToEnd, "msg/s"),
      callback_p50_ms: measure("callback latency p50", round(percentile(latencies, 50), 0), "ms"),
      callback_p99_ms: measure("callback latency p99", round(percentile(latencies, 99), 0), "ms"),
      cpu_shiri_ms_per_msg: measure("CPU per message, Shiri (api + worker)", cpuShiri, "ms"),
      cpu_api_ms_per_msg: measure("CPU per message, Shiri's api processes", perMessage(apiUsed), "ms"),
      cpu_worker_ms_per_msg: measure(
        "CPU per message, Shiri's worker processes",
        perMessage(shiriUsed - apiUsed),
        "ms",
      ),
      cpu_postgres_ms_per_msg: measure("CPU per message, Postgres (all its processes)", cpuPostgres, "ms"),
      cpu_ms_per_msg: measure(
        "CPU per message, Shiri + Postgres",
        cpuShiri === null || cpuPostgres === null ? null : round(cpuShiri + cpuPostgres, 3),
        "ms",
      ),
      cpu_postgres_own_ms_per_msg: measure(
        "CPU per message, Postgres: this database's backends and the background processes",
        perMessage(postgresOwnUsed),
        "ms",
      ),
      cpu_postgres_api_ms_per_msg: measure(
        "CPU per message, Postgres: the backends of the api processes' connections",
        perMessage(postgresFor("api")),
        "ms",
      ),
      cpu_postgres_worker_ms_per_msg: measure(
        "CPU per message, Postgres: the backends of the worker processes' connections",
        perMessage(postgresFor("worker")),
        "ms",
      ),
      cpu_load_ms_per_msg: measure(
        "CPU per message, the load generator",
        perMessage(loadDone.cpuSeconds),
        "ms",
      ),
      cpu_sink_ms_per_msg: measure("CPU per message, the SMPP sink", perMessage(sinkUsed), "ms"),
      // Gated at zero in every pipeline scenario, whatever budgets.json says (report/check.ts).
      numbers_submitted_twice: measure(
        "destination#part the sink received more than once",
        check.numbersSubmittedTwice,
        "numbers",
      ),
    };
    if (budgets.length > 0)
      measures.api_throttled_share = measure(
        "scheduler periods in which an api process spent its CPU budget",
        periods.ran > 0 ? round(periods.throttled / periods.ran, 2) : null,
        "share",
      );
    if (plan.bigRequest > 0)
      measures.big_request_ms = measure(
        `one ${plan.bigRequest.toLocaleString("en")}-recipient request while dispatch runs`,
        big ? round(big.ms, 0) : null,
        "ms",
      );
    const firedAt = state.bigSentAt;
    return {
      name: plan.name,
      title: plan.title,
      throughput: endToEnd,
      throughput_unit: "msg/s",
      latency_ms: latencySummary(latencies),
      latency_of: "message, request answered → its message.delivered callback",
      samples: delivered,
      seconds: round(spanSeconds, 2),
      errors: check.problems + (timedOut ? 1 : 0),
      settings: {
        messages: total,
        requests,
        recipients_per_request: plan.perRequest,
        in_flight: plan.inFlight,
        ...(plan.bigRequest > 0 && firedAt
          ? {
              big_request_recipients: plan.bigRequest,
              big_request_sent_at_s: round((firedAt.ms - loadDone.startedAtMs) / 1_000, 2),
              big_request_sent_after_callbacks: firedAt.callbacks,
            }
          : {}),
        postgres: `${env.db.version} (${env.db.source})`,
        processes: `${plan.apis} api, ${plan.workers} worker (${plan.workers} bind${plan.workers > 1 ? "s" : ""} per operator, nice ${workerNice}), SMPP sink, load generator (autocannon${plan.apis > 1 ? " per api" : ""}); webhook receiver ${plan.callbacksWithLoad ? "in the load generator's process" : "in the bench"}`,
        webhook_events: webhook.events,
        opt_out_list:
          optOuts > 0 ? `${optOuts.toLocaleString("en")} numbers, none of them a recipient` : "empty",
        webhook_batch_size: webhook.batchSize,
        webhook_pipeline_depth: Number(
          serviceEnv.WEBHOOK_PIPELINE_DEPTH ?? process.env.WEBHOOK_PIPELINE_DEPTH ?? 1,
        ),
        ...(plan.accountRateLimits === "none"
          ? { account_rate_limits: "none (shiri rate-limit set … 0)" }
          : {}),
        receipted_message_id: probe.mode,
        id_settings: "none (Shiri's defaults)",
        sink_ids: sinkIds,
        postgres_cpu: server
          ? "every process of the server (postmaster's tree)"
          : "not measured (server not local)",
        other_operators: "netone and telecel bound to the sink, no traffic",
        ...(apiMillicores !== undefined
          ? { api_cpu_budget: `${apiMillicores / 1_000} of a core for each api process (cgroup CPU quota)` }
          : {}),
        ...(plan.carrier
          ? {
              carrier: `each submit answered after ${plan.carrier.answerDelayMs} ms, window ${plan.carrier.windowSize} per bind, ${plan.carrier.maxBinds} binds allowed`,
            }
          : {}),
        completed: timedOut ? `no: timed out after ${timeoutSeconds} s` : "yes",
        ...(loadDone.failureSamples.length > 0 ? { failure_sample: loadDone.failureSamples[0] ?? "" } : {}),
      },
      measures,
      completeness: { ...check.details, ...(timedOut ? { timed_out_s: timeoutSeconds } : {}) },
      ...(stages ? { stages } : {}),
      ...(pgBusy
        ? {
            pg_busy: pgBusy.map(({ statement, wait, busy_backends }) => ({ statement, wait, busy_backends })),
          }
        : {}),
    };
  } finally {
    await cleanup.run();
  }
}

/** Waits until the carrier has answered every probe message (each out of created, enqueued and processing). */
async function probeMessagesAnswered(pool: Pool, ids: readonly string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { rows } = await pool.query<{ open: number }>(
      "SELECT count(*)::int AS open FROM messages WHERE id = ANY ($1::uuid[]) AND status IN ('created', 'enqueued', 'processing')",
      [ids],
    );
    if ((rows[0]?.open ?? 0) === 0) return;
    await sleep(50);
  }
  throw new Error("the probe messages were not answered by the sink within 30 s");
}
