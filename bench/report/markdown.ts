import { markdownTable } from "../lib/report.ts";
import type { ScenarioResult } from "../scenarios/types.ts";
import type { Verdict } from "./check.ts";

const n = (v: number | null) => (v !== null && Number.isFinite(v) ? v.toLocaleString("en") : "–");

export function resultsTable(results: readonly ScenarioResult[]): string {
  return markdownTable(
    ["scenario", "throughput", "p50 ms", "p90 ms", "p99 ms", "max ms", "latency of", "samples", "errors"],
    results.map((r) => [
      r.name,
      `${n(r.throughput)} ${r.throughput_unit}`,
      n(r.latency_ms.p50),
      n(r.latency_ms.p90),
      n(r.latency_ms.p99),
      n(r.latency_ms.max),
      r.latency_of,
      n(r.samples),
      r.errors,
    ]),
  );
}

/** The whole-pipeline scenarios' figures, one row each: the columns the common table lacks. */
const PIPELINE_COLUMNS: ReadonlyArray<[measure: string, header: string]> = [
  ["accepted_req_per_s", "accepted req/s"],
  ["accepted_msg_per_s", "accepted msg/s"],
  ["accept_p50_ms", "accept p50 ms"],
  ["accept_p99_ms", "accept p99 ms"],
  ["e2e_msg_per_s", "end to end msg/s"],
  ["callback_p50_ms", "callback p50 ms"],
  ["callback_p99_ms", "callback p99 ms"],
  ["cpu_shiri_ms_per_msg", "CPU ms/msg Shiri"],
  ["cpu_postgres_ms_per_msg", "CPU ms/msg Postgres"],
  ["cpu_ms_per_msg", "CPU ms/msg together"],
  ["big_request_ms", "10,000-recipient request ms"],
  ["numbers_submitted_twice", "numbers submitted twice"],
];

export function pipelineTable(results: readonly ScenarioResult[]): string | null {
  const rows = results.filter((r) => r.measures);
  if (rows.length === 0) return null;
  const value = (r: ScenarioResult, key: string) => {
    const m = r.measures?.[key];
    return m?.value === null || m?.value === undefined ? "–" : n(m.value);
  };
  return markdownTable(
    ["scenario", ...PIPELINE_COLUMNS.map(([, header]) => header), "complete"],
    rows.map((r) => [
      r.name,
      ...PIPELINE_COLUMNS.map(([key]) => value(r, key)),
      r.errors === 0 ? "yes" : `NO (${r.errors} problems)`,
    ]),
  );
}

/** What a pipeline scenario checked, and what fell short. */
function completenessLines(results: readonly ScenarioResult[]): string[] {
  return results
    .filter((r) => r.completeness)
    .map(
      (r) =>
        `- **${r.name}** completeness: ${Object.entries(r.completeness ?? {})
          .map(([k, v]) => `${k.replace(/_/g, " ")} ${typeof v === "number" ? v.toLocaleString("en") : v}`)
          .join(", ")}.`,
    );
}

export function verdictTable(verdicts: readonly Verdict[]): string {
  return markdownTable(
    ["scenario", "measure", "budget", "passes if", "actual", "verdict"],
    verdicts.map((v) => [
      v.scenario,
      v.measure,
      v.budget === null ? "–" : `${n(v.budget)} ${v.unit}`,
      v.limit === null ? "–" : `${v.direction} ${n(v.limit)} ${v.unit}`,
      v.actual === null ? "–" : `${n(v.actual)} ${v.unit}`,
      v.status,
    ]),
  );
}

/** The scale-out scenarios' comparisons, which their rows (the runs with two processes) do not show. */
function scaleOutLines(results: readonly ScenarioResult[]): string[] {
  return results.flatMap((r) => {
    const [one, two, speedUp] = [
      r.measures?.scale_out_one,
      r.measures?.scale_out_two,
      r.measures?.scale_out_speedup,
    ];
    if (!one || !two || speedUp?.value === undefined || speedUp.value === null) return [];
    const limit = r.settings.carrier ?? r.settings.api_cpu_budget ?? "–";
    return [
      `- **${r.name}**: ${one.label} ${n(one.value)} ${one.unit}, ${two.label} ${n(two.value)} (${n(speedUp.value)}×); ${limit}.`,
    ];
  });
}

function pipelineSection(results: readonly ScenarioResult[]): string[] {
  const table = pipelineTable(results);
  if (!table) return [];
  return [
    "## Whole pipeline",
    "",
    "Every stage at once, as a customer runs it: the load in a process of its own, Shiri's api and",
    "worker processes, an SMPP sink that answers at once and sends a receipt per message, the account",
    "webhook taking message.delivered callbacks. Throughput above is end to end (first request → last",
    "delivery callback) and latency is a message's, from its request's answer to its callback. CPU per",
    "message from /proc: Shiri's two processes, and every process of the Postgres server.",
    "",
    table,
    "",
    ...scaleOutLines(results),
    ...completenessLines(results),
    "",
  ];
}

/** The whole results page: what ran where, the figures, and how to reproduce them. */
export function resultsPage(doc: {
  generated_at: string;
  command: string;
  mode: string;
  machine: {
    cpus: number;
    cpu_model: string;
    node: string;
    load_average_1m: { before: number; after: number };
  };
  postgres: { version: string; source: string };
  /** under_test is absent from results written before the benches measured the compiled code. */
  source: { commit: string; src_modified: boolean; under_test?: string };
  results: readonly ScenarioResult[];
  verdicts: readonly Verdict[] | null;
  chart: string;
}): string {
  const m = doc.machine;
  const lines = [
    "# Release bench results",
    "",
    `Generated ${doc.generated_at} by \`${doc.command}\` (${doc.mode}) on ${m.cpus} × ${m.cpu_model}, Node ${m.node},`,
    `Postgres ${doc.postgres.version} (${doc.postgres.source}, loopback); load average ${m.load_average_1m.before} before,`,
    `${m.load_average_1m.after} after. Code: ${doc.source.commit.slice(0, 12)}${doc.source.src_modified ? " with uncommitted changes in src/" : ""}${doc.source.under_test ? ` (${doc.source.under_test})` : ""}.`,
    "",
    resultsTable(doc.results),
    "",
    ...doc.results.map(
      (r) =>
        `- **${r.name}**: ${r.title}; ${Object.entries(r.settings)
          .map(([k, v]) => `${k.replace(/_/g, " ")} ${typeof v === "number" ? v.toLocaleString("en") : v}`)
          .join(", ")}.`,
    ),
    "",
    "Throughput: messages accepted per second for sends (recipients for bulk), requests answered",
    "per second for retrieve, messages delivered per second (first acceptance to last receipt) end to",
    "end. Latency: per request for HTTP scenarios, per message from received_at to delivered_at end",
    "to end.",
    "",
    ...pipelineSection(doc.results),
    `![throughput and latency per scenario](${doc.chart})`,
  ];
  if (doc.verdicts) lines.push("", "## Budgets", "", verdictTable(doc.verdicts));
  return `${lines.join("\n")}\n`;
}
