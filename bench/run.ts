/**
 * The release bench: `npm run bench` (node --import tsx bench/run.ts).
 *
 * Scenarios, in order: single send; bulk sends of 100, 1,000 and 10,000 recipients; retrieve; end
 * to end to delivered_at through one worker and the carrier simulators. It starts what it needs —
 * a fresh database on DATABASE_URL's server (else an embedded Postgres under bench/.data), the
 * API in a child process, for e2e a worker in another and the simulators here — shows a progress
 * bar on stderr, prints a Markdown table, writes results (JSON, Markdown, SVG chart) and stops
 * everything it started, also on Ctrl-C.
 *
 *   npm run bench                          full run (≈ 2 min) → bench/results/release.{json,md,svg}
 *   npm run bench -- --check               … then compare with bench/budgets.json; exit 1 on a regression
 *   npm run bench -- --quick               shorter runs, to try it (→ bench/.data/release/)
 *   npm run bench -- --scenarios single,e2e
 *   npm run bench -- --check --from bench/results/release.json   judge a results file, run nothing
 *   npm run bench -- --render --from bench/results/release.json  redraw its .md and .svg
 *   --out DIR writes the results elsewhere; --budgets FILE reads other budgets.
 *
 *   npm run bench -- --peers kannel [--rounds 3] [--quick] [--check]
 *                                          Shiri beside a tuned Kannel 1.4.5, alternating runs, in one
 *                                          report (bench/peers/kannel.md) → bench/.data/peers/kannel.{json,md};
 *                                          --check gates the ratios (budgets.json "peers")
 *   npm run bench -- --peers kannel --from kannel.json --check   judge a saved comparison
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Cleanup } from "./lib/cleanup.ts";
import { loadAverage, machine, sourceVersion } from "./lib/machine.ts";
import { measureCompiledUnlessTold } from "./lib/shiri-process.ts";
import { kannelUnavailable, RUNS_PER_ROUND, runKannelComparison } from "./peers/compare.ts";
import { comparisonMarkdown, type PeerComparison, peerComparisonSchema } from "./peers/comparison.ts";
import { type Budgets, check, checkPeers, passed, readBudgets, type Verdict } from "./report/check.ts";
import { pipelineTable, resultsPage, resultsTable, verdictTable } from "./report/markdown.ts";
import { Progress } from "./report/progress.ts";
import { renderChart } from "./report/svg.ts";
import { type StartedEnv, startEnv } from "./scenarios/env.ts";
import { SCENARIOS } from "./scenarios/index.ts";
import type { Scenario, ScenarioResult } from "./scenarios/types.ts";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const USAGE = `usage: npm run bench -- [--check] [--quick] [--scenarios a,b] [--out DIR] [--budgets FILE]
       npm run bench -- --from results.json [--check] [--render]
       npm run bench -- --peers kannel [--rounds N] [--quick] [--check] [--out DIR] [--from comparison.json]
scenarios: ${SCENARIOS.map((s) => s.name).join(", ")}`;

class UsageError extends Error {}

interface ResultsDoc {
  generated_at: string;
  command: string;
  mode: "full" | "quick" | "partial";
  source: ReturnType<typeof sourceVersion>;
  machine: ReturnType<typeof machine>;
  results: ScenarioResult[];
}

function parse() {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions();
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  let chosen: readonly Scenario[] = SCENARIOS;
  if (values.scenarios !== undefined) {
    const names = values.scenarios
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
    if (unknown.length > 0 || names.length === 0)
      throw new UsageError(`unknown scenario(s) ${unknown.join(", ")}\n${USAGE}`);
    chosen = SCENARIOS.filter((s) => names.includes(s.name));
  }
  return { ...values, chosen };
}

function parseOptions() {
  return parseArgs({
    options: {
      check: { type: "boolean", default: false },
      quick: { type: "boolean", default: false },
      scenarios: { type: "string" },
      from: { type: "string" },
      render: { type: "boolean", default: false },
      out: { type: "string" },
      budgets: { type: "string" },
      peers: { type: "string" },
      rounds: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
}

/** Runs the chosen scenarios: the HTTP ones on one shared API and database, e2e on its own. */
async function runScenarios(
  chosen: readonly Scenario[],
  quick: boolean,
): Promise<{
  results: ScenarioResult[];
  postgres: { version: string; source: string };
}> {
  const progress = new Progress(chosen.length);
  const results: ScenarioResult[] = [];
  let postgres = { version: "unknown", source: "unknown" };
  const cleanup = new Cleanup();
  const onSigint = stopOnSigint(progress, cleanup);
  try {
    const http = chosen.filter((s) => s.kind === "http");
    if (http.length > 0) {
      progress.note("starting Postgres and the API for the HTTP scenarios…");
      const env: StartedEnv = await startEnv(cleanup);
      postgres = { version: env.db.version, source: env.db.source };
      progress.note(
        `API pid ${env.api.pid} at ${env.api.base}; Postgres ${env.db.version} (${env.db.source})`,
      );
      for (const s of http) results.push(await runOne(s, env, progress, quick, cleanup));
      await cleanup.run();
    }
    for (const s of chosen.filter((x) => x.kind === "e2e")) {
      // Reported as not run, which --check reports without failing.
      const reason = s.unavailable?.() ?? null;
      if (reason) progress.note(`${s.name}: not run here: ${reason}`);
      else results.push(await runOne(s, null, progress, quick, cleanup));
    }
    if (postgres.source === "unknown") {
      postgres = { version: "see e2e", source: process.env.DATABASE_URL ? "DATABASE_URL" : "embedded" };
    }
  } finally {
    await cleanup.run();
    process.off("SIGINT", onSigint);
  }
  // Keep the order of SCENARIOS whatever ran first.
  results.sort(
    (a, b) => SCENARIOS.findIndex((s) => s.name === a.name) - SCENARIOS.findIndex((s) => s.name === b.name),
  );
  return { results, postgres };
}

async function runOne(
  s: Scenario,
  env: StartedEnv | null,
  progress: Progress,
  quick: boolean,
  cleanup: Cleanup,
): Promise<ScenarioResult> {
  const step = progress.step(s.name);
  const r = await s.run(env, step, { quick, cleanup });
  step.done(
    `${r.throughput.toLocaleString("en")} ${r.throughput_unit}, p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms` +
      (r.errors ? `, ${r.errors} ERRORS` : ""),
  );
  return r;
}

/** Writes release.json, release.svg (the chart) and release.md (the table, the chart, the verdicts). */
async function writeReport(doc: ResultsDoc, outDir: string, budgets: Budgets | null): Promise<void> {
  await mkdir(outDir, { recursive: true });
  const { postgres, load_average_1m: load } = doc.machine;
  const chart = renderChart(doc.results, {
    title: "Shiri release bench",
    subtitle: `${doc.generated_at.slice(0, 16).replace("T", " ")} UTC · ${doc.mode} · ${doc.machine.cpus} × ${doc.machine.cpu_model} · Postgres ${postgres.version} (${postgres.source}) · load ${load.before}→${load.after}`,
    budgets,
  });
  await writeFile(path.join(outDir, "release.json"), `${JSON.stringify(doc, null, 2)}\n`);
  await writeFile(path.join(outDir, "release.svg"), chart);
  const verdicts = budgets ? check(doc.results, budgets) : null;
  await writeFile(
    path.join(outDir, "release.md"),
    resultsPage({ ...doc, postgres, verdicts, chart: "release.svg" }),
  );
}

/**
 * --peers kannel: Shiri beside Kannel, alternating runs (bench/peers/compare.ts), one report;
 * with --check, the ratios against budgets.json's "peers". Without Kannel installed it says so in
 * one line, and fails when --check asked for the comparison.
 */
async function runPeers(
  args: ReturnType<typeof parse>,
  budgets: Budgets | null,
  budgetsPath: string,
): Promise<number> {
  if (args.peers !== "kannel") throw new UsageError(`unknown peer ${args.peers}: only kannel\n${USAGE}`);
  const rounds = Number(args.rounds ?? "3");
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20)
    throw new UsageError(`--rounds must be a whole number from 1 to 20\n${USAGE}`);
  let comparison: PeerComparison;
  if (args.from) {
    comparison = peerComparisonSchema.parse(JSON.parse(await readFile(args.from, "utf8")));
  } else {
    const unavailable = kannelUnavailable();
    if (unavailable) {
      process.stderr.write(`peers: ${unavailable}${args.check ? ": --check fails" : ""}\n`);
      return args.check ? 1 : 0;
    }
    measureCompiledUnlessTold();
    const loadBefore = loadAverage();
    const progress = new Progress(rounds * RUNS_PER_ROUND);
    const cleanup = new Cleanup();
    const onSigint = stopOnSigint(progress, cleanup);
    try {
      const argv = process.argv.slice(2).join(" ");
      const source = sourceVersion();
      const ran = await runKannelComparison({
        rounds,
        quick: args.quick,
        command: `npm run bench -- ${argv}`,
        progress,
        cleanup,
      });
      // The machine as the comparison ended: its load average before and after.
      const postgres = {
        version: "see the Shiri runs",
        source: process.env.DATABASE_URL ? "DATABASE_URL" : "embedded",
      };
      comparison = { ...ran, machine: { ...machine(loadBefore, postgres), source } };
    } finally {
      await cleanup.run();
      process.off("SIGINT", onSigint);
    }
    const outDir = path.resolve(args.out ?? here("./.data/peers/"));
    await mkdir(outDir, { recursive: true });
    await writeFile(path.join(outDir, "kannel.json"), `${JSON.stringify(comparison, null, 2)}\n`);
    await writeFile(path.join(outDir, "kannel.md"), comparisonMarkdown(comparison));
    process.stdout.write(`\nwritten to ${outDir}/kannel.{json,md}\n`);
  }
  process.stdout.write(`\n${comparisonMarkdown(comparison)}`);
  if (!args.check || !budgets) return 0;
  const verdicts = checkPeers([comparison], budgets);
  const ok = passed(verdicts) && verdicts.length > 0;
  process.stdout.write(
    `\nbudgets: ${budgetsPath} ("peers")\n\n${verdictTable(verdicts)}\n\n` +
      `${ok ? "PASS: Shiri meets every ratio against Kannel" : "FAIL: Shiri misses a ratio against Kannel (or a run was incomplete)"}\n`,
  );
  return ok ? 0 : 1;
}

async function main(): Promise<number> {
  const args = parse();
  const budgetsPath = path.resolve(args.budgets ?? here("./budgets.json"));
  const budgets: Budgets | null = await readBudgets(budgetsPath).catch(() => null);
  if (args.check && !budgets) throw new Error(`--check needs budgets at ${budgetsPath}`);
  if (args.peers !== undefined) return runPeers(args, budgets, budgetsPath);

  let doc: ResultsDoc;
  if (args.from) {
    doc = JSON.parse(await readFile(args.from, "utf8")) as ResultsDoc;
    if (args.render) {
      const outDir = path.resolve(args.out ?? path.dirname(args.from));
      await writeReport(doc, outDir, budgets);
      process.stdout.write(`re-rendered ${outDir}/release.{json,md,svg} from ${args.from}\n`);
    }
  } else {
    measureCompiledUnlessTold();
    const loadBefore = loadAverage();
    const full = !args.quick && args.chosen.length === SCENARIOS.length;
    const { results, postgres } = await runScenarios(args.chosen, Boolean(args.quick));
    const argv = process.argv.slice(2).join(" ");
    doc = {
      generated_at: new Date().toISOString(),
      command: `npm run bench${argv ? ` -- ${argv}` : ""}`,
      mode: args.quick ? "quick" : full ? "full" : "partial",
      source: sourceVersion(),
      machine: machine(loadBefore, postgres),
      results,
    };
    // Only a full run replaces the committed results; tries go under bench/.data (ignored by git).
    const outDir = path.resolve(args.out ?? (full ? here("./results/") : here("./.data/release/")));
    await writeReport(doc, outDir, budgets);
    const pipeline = pipelineTable(results);
    process.stdout.write(
      `\n${resultsTable(results)}\n${pipeline ? `\n${pipeline}\n` : ""}\nwritten to ${outDir}/release.{json,md,svg}\n`,
    );
  }

  if (!args.check || !budgets) return 0;
  const verdicts: Verdict[] = check(doc.results, budgets);
  const ok = passed(verdicts);
  process.stdout.write(
    `\nbudgets: ${budgetsPath} (tolerance ${budgets.tolerance * 100} %)\n\n${verdictTable(verdicts)}\n\n` +
      `${ok ? "PASS: no regression against the budgets" : "FAIL: regression against the budgets"}\n`,
  );
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(2);
  },
);

/** Ctrl-C stops what the bench started, once, and exits 130; the caller removes the listener. */
function stopOnSigint(progress: Progress, cleanup: Cleanup): () => void {
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) return;
    interrupted = true;
    progress.note("interrupted: stopping what the bench started…");
    void cleanup.run().then(() => process.exit(130));
  };
  process.on("SIGINT", onSigint);
  return onSigint;
}
