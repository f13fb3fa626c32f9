/**
 * Shiri beside Kannel in one report (issue 27): `npm run bench -- --peers kannel [--rounds 3]
 * [--quick] [--check]`. Each round runs, per variant, Kannel (bench/peers/kannel-bench.ts, tuned)
 * and Shiri (bench/pipeline/run-pipeline.ts: one api, one worker, the account webhook with one
 * event a request, the account's rate limits lifted) back to back against the same SMPP sink
 * and the same load; who goes first alternates from round to round, so a machine growing busier
 * does not always weigh on the same system. The figures: bench/peers/comparison.ts.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { Cleanup } from "../lib/cleanup.ts";
import { stopChild } from "../lib/shiri-process.ts";
import { type PipelinePlan, runPipeline } from "../pipeline/run-pipeline.ts";
import type { Progress } from "../report/progress.ts";
import { compareVariant, type PeerComparison, type SystemRun, type VariantComparison } from "./comparison.ts";
import { warmUpFor } from "./warm-up.ts";

/** The two variants the issue measured: single sends, and bulk with one callback a message. */
const VARIANTS = [
  {
    variant: "single",
    title: "single sends, 50 in flight, one delivery callback a message (one a request)",
    perRequest: 1,
    inFlight: 50,
  },
  {
    variant: "bulk",
    title: "bulk sends, 100 recipients a request, 10 in flight, one delivery callback a message",
    perRequest: 100,
    inFlight: 10,
  },
] as const;

/** Runs a round: each variant, each system. */
export const RUNS_PER_ROUND = VARIANTS.length * 2;

/** Messages a run: the 20,000, or 2,000 to try it (--quick). */
export const MESSAGES = { full: 20_000, quick: 2_000 } as const;

/** Where kannel-bench.ts looks for the boxes: PATH, and /usr/sbin where Debian installs them. */
const kannelDirs = (): string[] => [
  ...(process.env.PATH ?? "").split(path.delimiter),
  "/usr/sbin",
  "/usr/local/sbin",
];

/** Why Kannel cannot run here (its boxes are not in `dirs`), or null. */
export function kannelUnavailable(dirs: readonly string[] = kannelDirs()): string | null {
  const missing = ["bearerbox", "smsbox"].filter(
    (name) => !dirs.some((dir) => dir !== "" && existsSync(path.join(dir, name))),
  );
  return missing.length === 0
    ? null
    : `Kannel is not installed here (${missing.join(" and ")} not found; Debian bookworm: apt-get install kannel), so there is no comparison`;
}

/** The fields of kannel-bench.ts's JSON the comparison reads. */
const kannelResult = z.object({
  measures: z.object({
    accepted_req_per_s: z.number().nullable(),
    accepted_msg_per_s: z.number().nullable(),
    accept_p99_ms: z.number().nullable(),
    e2e_msg_per_s: z.number().nullable(),
    dlr_after_answer_p50_ms: z.number().nullable(),
    dlr_after_answer_p99_ms: z.number().nullable(),
    cpu_kannel_ms_per_msg: z.number().nullable(),
    cpu_bearerbox_ms_per_msg: z.number().nullable(),
    cpu_smsbox_ms_per_msg: z.number().nullable(),
    cpu_load_ms_per_msg: z.number().nullable(),
    cpu_sink_ms_per_msg: z.number().nullable(),
  }),
  completeness: z.record(z.string(), z.union([z.number(), z.boolean(), z.null()])),
});

const loadNow = () => Math.round((os.loadavg()[0] ?? 0) * 100) / 100;

/** What fell short in a completeness record: its non-zero counts (zero or false when complete). */
function shortfalls(
  record: Record<string, number | boolean | string | null>,
  keys: readonly string[],
): string {
  return keys
    .filter((k) => typeof record[k] === "number" && record[k] !== 0)
    .map((k) => `${k} ${record[k]}`)
    .join(", ");
}

const KANNEL_SHORTFALLS = [
  "request_failures",
  "missing_submits",
  "duplicate_submits",
  "unexpected_submits",
  "missing_dlrs",
  "duplicate_dlrs",
  "unexpected_dlrs",
  "dlrs_not_delivered_type",
  "unreadable_dlrs",
] as const;

/** One Kannel run: kannel-bench.ts in a child process (it stops its boxes itself), its JSON read. */
async function runKannel(
  variant: (typeof VARIANTS)[number],
  messages: number,
  round: number,
  cleanup: Cleanup,
): Promise<SystemRun> {
  const script = fileURLToPath(new URL("./kannel-bench.ts", import.meta.url));
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      script,
      "--messages",
      String(messages),
      "--per-request",
      String(variant.perRequest),
      "--connections",
      String(variant.inFlight),
      "--timeout",
      "600",
      "--sink-ids",
      "opaque",
      "--warmup",
      String(warmUpFor(messages)),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const stop = () => stopChild(child, 30_000);
  cleanup.add(stop);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString("utf8");
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString("utf8")).slice(-4_000);
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  let parsed: z.infer<typeof kannelResult>;
  try {
    parsed = kannelResult.parse(JSON.parse(stdout));
  } catch {
    throw new Error(`the Kannel run ended (exit ${code}) without a result:\n${stderr}`);
  }
  const m = parsed.measures;
  const complete = code === 0 && parsed.completeness.complete === true;
  return {
    system: "kannel",
    round,
    accepted_msg_per_s: m.accepted_msg_per_s,
    accepted_req_per_s: m.accepted_req_per_s,
    accept_p99_ms: m.accept_p99_ms,
    e2e_msg_per_s: m.e2e_msg_per_s,
    // From each request's answer, as Shiri's callback latency is measured.
    callback_p50_ms: m.dlr_after_answer_p50_ms,
    callback_p99_ms: m.dlr_after_answer_p99_ms,
    cpu_ms_per_msg: m.cpu_kannel_ms_per_msg,
    cpu_detail: `bearerbox ${m.cpu_bearerbox_ms_per_msg ?? "—"} + smsbox ${m.cpu_smsbox_ms_per_msg ?? "—"}`,
    bench_cpu: { load_ms_per_msg: m.cpu_load_ms_per_msg, sink_ms_per_msg: m.cpu_sink_ms_per_msg },
    complete,
    problems: complete
      ? ""
      : shortfalls(parsed.completeness, KANNEL_SHORTFALLS) || `exit ${code}, accepted fewer than planned`,
    load_average: loadNow(),
  };
}

/** One Shiri run: the whole pipeline as the issue set it beside Kannel. */
async function runShiri(
  variant: (typeof VARIANTS)[number],
  messages: number,
  round: number,
  progress: Progress,
  cleanup: Cleanup,
): Promise<SystemRun> {
  const plan: PipelinePlan = {
    name: `peers-shiri-${variant.variant}`,
    title: variant.title,
    mode: variant.perRequest === 1 ? "single" : "bulk",
    messages: { full: messages, quick: messages },
    perRequest: variant.perRequest,
    inFlight: variant.inFlight,
    bigRequest: 0,
    apis: 1,
    workers: 1,
    webhookBatchSize: 1,
    // Tuned as Kannel is: a job's callbacks pipelined on its connection (docs/configuration.md).
    webhookPipelineDepth: 16,
    accountRateLimits: "none",
    sinkIds: "opaque",
    callbacksWithLoad: true,
    warmUp: { full: warmUpFor(messages), quick: warmUpFor(messages) },
  };
  const step = progress.step(`round ${round}, ${variant.variant}, Shiri`);
  const r = await runPipeline(plan, step, { quick: false, cleanup });
  const value = (name: string) => r.measures?.[name]?.value ?? null;
  const complete = r.errors === 0;
  // Shiri's processes and the Postgres processes that worked for this run (its database's
  // backends and the server's background processes), not every process of the server: on a
  // shared server (DATABASE_URL) the others' backends are other people's work.
  const shiriCpu = value("cpu_shiri_ms_per_msg");
  const postgresCpu = value("cpu_postgres_own_ms_per_msg");
  const cpu =
    shiriCpu === null || postgresCpu === null ? null : Math.round((shiriCpu + postgresCpu) * 1000) / 1000;
  const run: SystemRun = {
    system: "shiri",
    round,
    accepted_msg_per_s: value("accepted_msg_per_s"),
    accepted_req_per_s: value("accepted_req_per_s"),
    accept_p99_ms: value("accept_p99_ms"),
    e2e_msg_per_s: value("e2e_msg_per_s"),
    callback_p50_ms: value("callback_p50_ms"),
    callback_p99_ms: value("callback_p99_ms"),
    cpu_ms_per_msg: cpu,
    cpu_detail: `Shiri ${shiriCpu ?? "—"} (api ${value("cpu_api_ms_per_msg") ?? "—"}, worker ${value("cpu_worker_ms_per_msg") ?? "—"}) + Postgres ${postgresCpu ?? "—"} (this database's backends and the background processes, of which the api's connections ${value("cpu_postgres_api_ms_per_msg") ?? "—"} and the worker's ${value("cpu_postgres_worker_ms_per_msg") ?? "—"}; every Postgres process: ${value("cpu_postgres_ms_per_msg") ?? "—"})`,
    bench_cpu: {
      load_ms_per_msg: value("cpu_load_ms_per_msg"),
      sink_ms_per_msg: value("cpu_sink_ms_per_msg"),
    },
    complete,
    problems: complete
      ? ""
      : Object.entries(r.completeness ?? {})
          .filter(([, v]) => typeof v === "number" && v !== 0)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ") || `${r.errors} errors`,
    load_average: loadNow(),
  };
  step.done(`${run.e2e_msg_per_s ?? "—"} msg/s end to end${complete ? "" : ", INCOMPLETE"}`);
  return run;
}

export async function runKannelComparison(options: {
  rounds: number;
  quick: boolean;
  command: string;
  progress: Progress;
  cleanup: Cleanup;
}): Promise<PeerComparison> {
  const { rounds, progress, cleanup } = options;
  const messages = options.quick ? MESSAGES.quick : MESSAGES.full;
  const runs = new Map<string, SystemRun[]>(VARIANTS.map((v) => [v.variant, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const variant of VARIANTS) {
      const kannel = async () => {
        const step = progress.step(`round ${round}, ${variant.variant}, Kannel`);
        const run = await runKannel(variant, messages, round, cleanup);
        step.done(`${run.e2e_msg_per_s ?? "—"} msg/s end to end${run.complete ? "" : ", INCOMPLETE"}`);
        return run;
      };
      const shiri = () => runShiri(variant, messages, round, progress, cleanup);
      // Kannel first in odd rounds, Shiri first in even ones.
      const order = round % 2 === 1 ? [kannel, shiri] : [shiri, kannel];
      for (const run of order) runs.get(variant.variant)?.push(await run());
    }
  }
  const variants: VariantComparison[] = VARIANTS.map((v) =>
    compareVariant(v.variant, v.title, runs.get(v.variant) ?? []),
  );
  return {
    kind: "peer-comparison",
    peer: "kannel",
    generated_at: new Date().toISOString(),
    command: options.command,
    rounds,
    messages,
    warm_up: warmUpFor(messages),
    // The caller describes the machine as the comparison ended (bench/run.ts).
    machine: {},
    variants,
  };
}
