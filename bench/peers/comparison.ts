/**
 * Shiri beside a peer gateway (Kannel), round by round: what one run of either system reports,
 * and the ratios Shiri / peer the release gate reads (bench/report/check.ts). Pure figures, no
 * processes: bench/peers/compare.ts runs the systems. Why ratios and not rates:
 * docs/decisions/0012-kannel-comparison.md.
 */
import { z } from "zod";
import { markdownTable, median, round } from "../lib/report.ts";

/** One run of one system in one variant, in the figures both systems report alike. */
export interface SystemRun {
  system: "kannel" | "shiri";
  round: number;
  /** Recipients accepted a second (single sends: requests a second). */
  accepted_msg_per_s: number | null;
  accepted_req_per_s: number | null;
  accept_p99_ms: number | null;
  /** First request → last delivery callback. */
  e2e_msg_per_s: number | null;
  /** Each message's request answered → its delivery callback. */
  callback_p50_ms: number | null;
  callback_p99_ms: number | null;
  /**
   * Kannel: bearerbox + smsbox; Shiri: its api and worker processes + the Postgres processes that
   * worked for the run (its database's backends and the server's background processes).
   */
  cpu_ms_per_msg: number | null;
  /** The CPU figure's parts. */
  cpu_detail: string;
  /**
   * The bench's own processes beside the system, a message: the load (with the callback receiver)
   * and the SMPP sink. They share the machine, so what they take bounds what either system gets.
   */
  bench_cpu: { load_ms_per_msg: number | null; sink_ms_per_msg: number | null } | null;
  /** Every number submitted once, every callback received once, nothing failed. */
  complete: boolean;
  /** What fell short, when not complete. */
  problems: string;
  /** The machine's 1-minute load average as the run ended (the comparison's noise). */
  load_average: number;
}

/** The ratios gated in budgets.json (peers.<peer>.<variant>.<name>), and the one absolute figure. */
export const RATIOS = {
  accepted_ratio: { label: "recipients accepted a second, Shiri / peer", unit: "×" },
  e2e_ratio: { label: "end to end msg/s, Shiri / peer", unit: "×" },
  callback_p99_ms: { label: "Shiri's callback latency p99", unit: "ms" },
  callback_p99_ratio: { label: "callback latency p99, Shiri / peer", unit: "×" },
  cpu_ratio: { label: "CPU a message, Shiri + Postgres / peer", unit: "×" },
} as const;
export type RatioName = keyof typeof RATIOS;

/** A figure over the rounds: the median is what the gate reads, the range is reported beside it. */
export interface Spread {
  median: number | null;
  min: number | null;
  max: number | null;
  unit: string;
}

export interface VariantComparison {
  variant: string;
  title: string;
  runs: SystemRun[];
  ratios: Record<RatioName, Spread>;
  /** Every run of both systems complete. */
  complete: boolean;
}

export interface PeerComparison {
  kind: "peer-comparison";
  peer: string;
  generated_at: string;
  command: string;
  rounds: number;
  messages: number;
  /** Messages each system was sent before each run, not measured (bench/peers/warm-up.ts). */
  warm_up: number;
  machine: Record<string, unknown>;
  variants: VariantComparison[];
}

const ratio = (a: number | null, b: number | null): number | null =>
  a === null || b === null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? null : a / b;

function spread(values: ReadonlyArray<number | null>, unit: string, digits: number): Spread {
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (known.length === 0) return { median: null, min: null, max: null, unit };
  return {
    median: round(median(known), digits),
    min: round(Math.min(...known), digits),
    max: round(Math.max(...known), digits),
    unit,
  };
}

/**
 * The ratios of a variant's runs, Shiri's round r against the peer's round r (each pair ran
 * back to back, so they shared the machine's state of the moment).
 */
export function compareVariant(variant: string, title: string, runs: SystemRun[]): VariantComparison {
  const rounds = [...new Set(runs.map((r) => r.round))].sort((a, b) => a - b);
  const pairs = rounds.flatMap((n) => {
    const shiri = runs.find((r) => r.round === n && r.system === "shiri");
    const peer = runs.find((r) => r.round === n && r.system === "kannel");
    return shiri && peer ? [{ shiri, peer }] : [];
  });
  const of = (pick: (p: { shiri: SystemRun; peer: SystemRun }) => number | null) => pairs.map(pick);
  return {
    variant,
    title,
    runs,
    ratios: {
      accepted_ratio: spread(
        of((p) => ratio(p.shiri.accepted_msg_per_s, p.peer.accepted_msg_per_s)),
        "×",
        2,
      ),
      e2e_ratio: spread(
        of((p) => ratio(p.shiri.e2e_msg_per_s, p.peer.e2e_msg_per_s)),
        "×",
        2,
      ),
      callback_p99_ms: spread(
        of((p) => p.shiri.callback_p99_ms),
        "ms",
        0,
      ),
      callback_p99_ratio: spread(
        of((p) => ratio(p.shiri.callback_p99_ms, p.peer.callback_p99_ms)),
        "×",
        2,
      ),
      cpu_ratio: spread(
        of((p) => ratio(p.shiri.cpu_ms_per_msg, p.peer.cpu_ms_per_msg)),
        "×",
        2,
      ),
    },
    complete: runs.length > 0 && pairs.length === rounds.length && runs.every((r) => r.complete),
  };
}

/** The bench's own CPU beside a run, as the end of its CPU line (nothing for an older comparison). */
const besideIt = ({ bench_cpu: bench }: SystemRun) =>
  bench
    ? `; beside it, the bench's load with its callback receiver ${show(bench.load_ms_per_msg)} and the SMPP sink ${show(bench.sink_ms_per_msg)}`
    : "";

const show = (v: number | null, unit = "") => (v === null ? "—" : `${v.toLocaleString("en")}${unit}`);
const range = (s: Spread) =>
  s.median === null
    ? "—"
    : s.min === s.max
      ? show(s.median, s.unit === "ms" ? " ms" : s.unit)
      : `${show(s.median, s.unit === "ms" ? " ms" : s.unit)} (${show(s.min)}–${show(s.max)})`;

function machineLine(machine: Record<string, unknown>): string {
  const text = (key: string) => {
    const v = machine[key];
    return typeof v === "string" || typeof v === "number" ? String(v) : "?";
  };
  return `${text("cpus")} × ${text("cpu_model")}, Node ${text("node")}`;
}

/** The report: every run of both systems, then the ratios with their range over the rounds. */
export function comparisonMarkdown(c: PeerComparison): string {
  const lines = [
    `# Shiri beside ${c.peer.charAt(0).toUpperCase()}${c.peer.slice(1)}`,
    "",
    `${c.generated_at.slice(0, 16).replace("T", " ")} UTC · \`${c.command}\` · ${c.rounds} round${c.rounds > 1 ? "s" : ""}, ${c.messages.toLocaleString("en")} messages a run after a warm-up of ${c.warm_up.toLocaleString("en")}, alternating`,
    "",
    `Machine: ${machineLine(c.machine)}. The load average of each run is in its row: figures from a busy machine are noise.`,
    "",
  ];
  for (const v of c.variants) {
    lines.push(`## ${v.variant}: ${v.title}`, "");
    lines.push(
      markdownTable(
        [
          "round",
          "system",
          "accepted msg/s",
          "accepted req/s",
          "accept p99",
          "end to end msg/s",
          "callback p50 / p99",
          "CPU ms/msg",
          "complete",
          "load",
        ],
        v.runs.map((r) => [
          r.round,
          r.system,
          show(r.accepted_msg_per_s),
          show(r.accepted_req_per_s),
          show(r.accept_p99_ms, " ms"),
          show(r.e2e_msg_per_s),
          `${show(r.callback_p50_ms)} / ${show(r.callback_p99_ms, " ms")}`,
          show(r.cpu_ms_per_msg),
          r.complete ? "yes" : `NO: ${r.problems}`,
          r.load_average,
        ]),
      ),
      "",
      ...v.runs.map(
        (r) => `- round ${r.round}, ${r.system}, CPU ms a message: ${r.cpu_detail}${besideIt(r)}`,
      ),
      "",
      markdownTable(
        ["Shiri / peer", "median (range over the rounds)"],
        (Object.keys(RATIOS) as RatioName[]).map((name) => [RATIOS[name].label, range(v.ratios[name])]),
      ),
      "",
    );
  }
  return `${lines.join("\n")}\n`;
}

const spreadSchema = z.object({
  median: z.number().nullable(),
  min: z.number().nullable(),
  max: z.number().nullable(),
  unit: z.string(),
});

/** A comparison read back from its JSON (`npm run bench -- --peers kannel --from … --check`). */
export const peerComparisonSchema = z.object({
  kind: z.literal("peer-comparison"),
  peer: z.string(),
  generated_at: z.string(),
  command: z.string(),
  rounds: z.number(),
  messages: z.number(),
  // Absent in a comparison written before warm-ups.
  warm_up: z.number().default(0),
  machine: z.record(z.string(), z.unknown()),
  variants: z.array(
    z.object({
      variant: z.string(),
      title: z.string(),
      runs: z.array(
        z.object({
          system: z.enum(["kannel", "shiri"]),
          round: z.number(),
          accepted_msg_per_s: z.number().nullable(),
          accepted_req_per_s: z.number().nullable(),
          accept_p99_ms: z.number().nullable(),
          e2e_msg_per_s: z.number().nullable(),
          callback_p50_ms: z.number().nullable(),
          callback_p99_ms: z.number().nullable(),
          cpu_ms_per_msg: z.number().nullable(),
          cpu_detail: z.string(),
          // Absent in a comparison written before the bench's own CPU was reported.
          bench_cpu: z
            .object({ load_ms_per_msg: z.number().nullable(), sink_ms_per_msg: z.number().nullable() })
            .nullable()
            .default(null),
          complete: z.boolean(),
          problems: z.string(),
          load_average: z.number(),
        }),
      ),
      ratios: z.object({
        accepted_ratio: spreadSchema,
        e2e_ratio: spreadSchema,
        callback_p99_ms: spreadSchema,
        callback_p99_ratio: spreadSchema,
        cpu_ratio: spreadSchema,
      }),
      complete: z.boolean(),
    }),
  ),
});
