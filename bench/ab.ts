/**
 * Two builds measured by alternating runs: `npm run bench:ab -- --against REV [--runs 10]
 * [--scenario pipeline-single] [--candidate-env NAME=VALUE]… [--keep]` (docs/benchmarks.md).
 *
 * A cut worth under some 5 % cannot be told from a machine of this project's kind moving by ±20 %
 * in a few pairs: three pairs once showed a tenth that thirty runs did not (bench/RESULTS.md). This
 * builds REV (a commit, a branch, a tag) in a worktree of its own under the system's temporary
 * directory and this checkout as it stands, then runs this checkout's bench `--runs` times on each,
 * alternating which goes first (SHIRI_UNDER_TEST; each run migrates its database with the
 * migrations of the build it measures), and reports each measure's mean and standard error on each
 * side and whether the difference passes Student's 95 % point (bench/lib/paired-stats.ts).
 * Two ratios are reported too, which the machine's own moves mostly cancel out of (below).
 *
 * The environment is passed through as it is (DATABASE_URL, BENCH_PIPELINE_* and the service's own
 * settings), so both builds run with the same; `--candidate-env NAME=VALUE` (repeatable) sets one
 * for the candidate's runs alone, to measure a setting (with HEAD as REV, say). Each run's results
 * are kept under bench/.data/ab/<run>; the report goes to stdout and bench/.data/ab/report.{json,md}.
 * The worktree is removed at the end unless --keep.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { z } from "zod";
import { type Comparison, compare, pairOrder } from "./lib/paired-stats.ts";
import { markdownTable } from "./lib/report.ts";
import { buildTree } from "./lib/shiri-process.ts";

const REPOSITORY = fileURLToPath(new URL("..", import.meta.url));
const OUT = path.join(REPOSITORY, "bench", ".data", "ab");
const USAGE =
  "usage: npm run bench:ab -- --against REV [--runs N] [--scenario NAME] [--candidate-env NAME=VALUE]… [--keep]";

const ReleaseResults = z.object({
  results: z
    .array(z.object({ name: z.string(), measures: z.record(z.string(), z.object({ value: z.number() })) }))
    .min(1),
});
type Measures = Record<string, number>;
type Side = "base" | "candidate";

/*
 * Two figures the machine's own moves mostly cancel out of. The worker's Postgres over the API's:
 * a change on the worker's side moves it. Shiri and Postgres's CPU a message over the bench's own
 * processes' (the load with its callback receiver, and the SMPP sink), which do the same work a
 * message whichever build they drive: a slower spell of the machine costs both alike.
 */
const WORKER_OVER_API = "postgres_worker_over_api";
const SYSTEM_OVER_BENCH = "cpu_over_bench_cpu";

function options() {
  const { values } = parseArgs({
    options: {
      against: { type: "string" },
      runs: { type: "string", default: "10" },
      scenario: { type: "string", default: "pipeline-single" },
      keep: { type: "boolean", default: false },
      "candidate-env": { type: "string", multiple: true, default: [] },
    },
  });
  const runs = Number(values.runs);
  if (!values.against || !Number.isInteger(runs) || runs < 2) throw new Error(USAGE);
  const candidateEnv: Record<string, string> = {};
  for (const setting of values["candidate-env"]) {
    const equals = setting.indexOf("=");
    if (equals < 1) throw new Error(`--candidate-env ${setting}: not NAME=VALUE\n${USAGE}`);
    candidateEnv[setting.slice(0, equals)] = setting.slice(equals + 1);
  }
  return { against: values.against, runs, scenario: values.scenario, keep: values.keep, candidateEnv };
}

function git(args: string[], cwd = REPOSITORY): string {
  const result = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/** REV checked out and built beside this checkout, sharing its node_modules. */
async function baseTree(commit: string): Promise<string> {
  const tree = path.join(tmpdir(), `shiri-ab-${commit.slice(0, 12)}`);
  if (!existsSync(tree)) {
    git(["worktree", "add", "--detach", tree, commit]);
    await symlink(path.join(REPOSITORY, "node_modules"), path.join(tree, "node_modules"), "dir");
  }
  buildTree(tree);
  return tree;
}

/** One run of this checkout's bench on `tree`'s build: its measures, or an error naming its log. */
async function runOnce(
  tree: string,
  scenario: string,
  label: string,
  env: Record<string, string>,
): Promise<Measures> {
  const out = path.join(OUT, label);
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const log = path.join(out, "bench.log");
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(REPOSITORY, "bench", "run.ts"), "--scenarios", scenario, "--out", out],
      {
        cwd: REPOSITORY,
        env: { ...process.env, ...env, SHIRI_UNDER_TEST: tree },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", reject);
    child.on("close", (exit) => void writeFile(log, Buffer.concat(chunks)).then(() => resolve(exit), reject));
  });
  if (code !== 0) throw new Error(`run ${label} failed (exit ${code}): see ${log}`);
  const doc = ReleaseResults.parse(JSON.parse(await readFile(path.join(out, "release.json"), "utf8")));
  const measures = Object.fromEntries(
    Object.entries(doc.results[0]?.measures ?? {}).map(([key, measure]) => [key, measure.value]),
  );
  const worker = measures.cpu_postgres_worker_ms_per_msg;
  const api = measures.cpu_postgres_api_ms_per_msg;
  if (worker !== undefined && api !== undefined && api > 0) measures[WORKER_OVER_API] = worker / api;
  const system = measures.cpu_ms_per_msg;
  const bench = (measures.cpu_load_ms_per_msg ?? 0) + (measures.cpu_sink_ms_per_msg ?? 0);
  if (system !== undefined && bench > 0) measures[SYSTEM_OVER_BENCH] = system / bench;
  return measures;
}

const figure = (value: number) => (Math.abs(value) >= 100 ? value.toFixed(0) : value.toPrecision(3));

function reportRows(comparisons: Array<[string, Comparison]>): string[][] {
  return comparisons.map(([measure, c]) => [
    measure,
    `${figure(c.base.mean)} ± ${figure(c.base.standardError)}`,
    `${figure(c.candidate.mean)} ± ${figure(c.candidate.standardError)}`,
    c.relative === null ? "–" : `${c.relative >= 0 ? "+" : ""}${(c.relative * 100).toFixed(1)} %`,
    c.t === null ? "–" : c.t.toFixed(1),
    c.verdict,
  ]);
}

async function main(): Promise<void> {
  const opts = options();
  const commit = git(["rev-parse", "--verify", `${opts.against}^{commit}`]);
  const settings = Object.entries(opts.candidateEnv).map(([name, value]) => `${name}=${value}`);
  const candidateDescription =
    `${git(["rev-parse", "--short", "HEAD"])}${git(["status", "--porcelain"]) ? " with uncommitted changes" : ""}` +
    (settings.length > 0 ? ` run with ${settings.join(" ")}` : "");
  await mkdir(OUT, { recursive: true });
  process.stderr.write(`ab: building ${opts.against} (${commit.slice(0, 12)}) and this checkout\n`);
  const base = await baseTree(commit);
  buildTree(REPOSITORY);
  const trees: Record<Side, string> = { base, candidate: REPOSITORY };
  const runs: Record<Side, Measures[]> = { base: [], candidate: [] };
  try {
    for (let pair = 0; pair < opts.runs; pair++)
      for (const side of pairOrder(pair)) {
        const label = `${side}-${pair + 1}`;
        const measures = await runOnce(
          trees[side],
          opts.scenario,
          label,
          side === "candidate" ? opts.candidateEnv : {},
        );
        runs[side].push(measures);
        process.stderr.write(
          `ab: ${label}: ${figure(measures.e2e_msg_per_s ?? Number.NaN)} msg/s end to end, ` +
            `${figure(measures.cpu_ms_per_msg ?? Number.NaN)} ms a message (Shiri and Postgres)\n`,
        );
      }
  } finally {
    if (!opts.keep) git(["worktree", "remove", "--force", base]);
  }
  const keys = Object.keys(runs.base[0] ?? {}).filter((key) =>
    [...runs.base, ...runs.candidate].every((m) => typeof m[key] === "number"),
  );
  const comparisons: Array<[string, Comparison]> = keys.map((key) => [
    key,
    compare(
      runs.base.map((m) => m[key] as number),
      runs.candidate.map((m) => m[key] as number),
    ),
  ]);
  const heading =
    `${opts.scenario}: ${opts.against} (${commit.slice(0, 12)}) as the base against ${candidateDescription}, ` +
    `${opts.runs} runs each, alternating; mean ± its standard error`;
  const table = markdownTable(
    ["measure", "base", "candidate", "change", "t", "verdict"],
    reportRows(comparisons),
  );
  await writeFile(path.join(OUT, "report.md"), `${heading}\n\n${table}\n`);
  await writeFile(
    path.join(OUT, "report.json"),
    `${JSON.stringify({ scenario: opts.scenario, base: commit, candidate: candidateDescription, runs, comparisons: Object.fromEntries(comparisons) }, null, 2)}\n`,
  );
  process.stdout.write(`\n${heading}\n\n${table}\n\nwritten to ${OUT}/report.{json,md}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
