import { markdownTable } from "../lib/report.ts";
import type { ScenarioResult } from "../scenarios/types.ts";
import type { Verdict } from "./check.ts";

const n = (v: number) => (Number.isFinite(v) ? v.toLocaleString("en") : "–");

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
  source: { commit: string; src_modified: boolean };
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
    `${m.load_average_1m.after} after. Code: ${doc.source.commit.slice(0, 12)}${doc.source.src_modified ? " with uncommitted changes in src/" : ""}.`,
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
    `![throughput and latency per scenario](${doc.chart})`,
  ];
  if (doc.verdicts) lines.push("", "## Budgets", "", verdictTable(doc.verdicts));
  return `${lines.join("\n")}\n`;
}
