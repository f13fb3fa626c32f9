import type { ScenarioResult } from "../scenarios/types.ts";
import type { Budgets } from "./check.ts";

/**
 * The results chart, hand-written SVG with no dependency: one row per scenario; on the left its
 * throughput, on the right its p50 and p99 latency, both on log scales (a single send does
 * hundreds a second and a bulk one tens of thousands; a retrieve takes milliseconds, a message
 * end to end hundreds). Budget bounds, when given, are drawn
 * as dashed marks: throughput must end right of its mark, p99 left of its own.
 */
const W = 1000;
const LABEL_W = 190;
const PANEL_W = 330;
const GAP = 60;
const TOP = 70;
const ROW = 46;
const BOTTOM = 70;
const T_X = LABEL_W;
const L_X = LABEL_W + PANEL_W + GAP + 40;

const COLOURS = { throughput: "#4e79a7", p50: "#59a14f", p99: "#e15759", budget: "#333", grid: "#ddd" };

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const fmt = (v: number) =>
  Number.isFinite(v)
    ? v >= 100
      ? Math.round(v).toLocaleString("en")
      : String(Math.round(v * 10) / 10)
    : "–";

function text(x: number, y: number, s: string, attrs = ""): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${esc(s)}</text>`;
}

export function renderChart(
  results: readonly ScenarioResult[],
  opts: { title: string; subtitle: string; budgets?: Budgets | null },
): string {
  const H = TOP + results.length * ROW + BOTTOM;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    text(16, 24, opts.title, 'font-size="16" font-weight="bold"'),
    text(16, 42, opts.subtitle, 'fill="#555"'),
    text(
      T_X,
      TOP - 8,
      "throughput (msg/s; retrieve: req/s; pipeline-*: end to end; log scale)",
      'font-weight="bold"',
    ),
    text(
      L_X,
      TOP - 8,
      "latency p50 / p99 (ms, log scale; pipeline-*: to the callback)",
      'font-weight="bold"',
    ),
  );

  const budgetOf = (name: string) => opts.budgets?.scenarios[name];
  const tol = (name: string) => budgetOf(name)?.tolerance ?? opts.budgets?.tolerance ?? 0;

  // Throughput axis, log10 between the powers of ten around every value and budget bound: a
  // single send does hundreds a second, a bulk one tens of thousands.
  const tValues = [
    ...results.map((r) => r.throughput),
    ...results.map((r) => (budgetOf(r.name)?.throughput ?? 0) * (1 - tol(r.name))),
  ].filter((v) => v > 0);
  const tMinExp = Math.floor(Math.log10(Math.max(1, Math.min(...tValues, 1e9))));
  const tMaxExp = Math.max(tMinExp + 1, Math.ceil(Math.log10(Math.max(10, ...tValues))));
  const tx = (v: number) =>
    T_X + ((Math.log10(Math.max(10 ** tMinExp, v)) - tMinExp) / (tMaxExp - tMinExp)) * PANEL_W;
  // Latency axis, log10 from 1 ms to a power of ten above the largest value.
  const lMaxExp = Math.max(
    2,
    Math.ceil(
      Math.log10(
        Math.max(
          10,
          ...results.map((r) => r.latency_ms.p99),
          ...results.map((r) => (budgetOf(r.name)?.p99_ms ?? 0) * (1 + tol(r.name))),
        ),
      ),
    ),
  );
  const lx = (v: number) => L_X + (Math.log10(Math.max(1, v)) / lMaxExp) * PANEL_W;
  const plotBottom = TOP + results.length * ROW;

  // Grid lines and axis labels.
  for (let e = tMinExp; e <= tMaxExp; e++) {
    const x = tx(10 ** e);
    out.push(`<line x1="${x}" y1="${TOP}" x2="${x}" y2="${plotBottom}" stroke="${COLOURS.grid}"/>`);
    out.push(text(x, plotBottom + 16, fmt(10 ** e), 'text-anchor="middle" fill="#555"'));
  }
  for (let e = 0; e <= lMaxExp; e++) {
    const x = lx(10 ** e);
    out.push(`<line x1="${x}" y1="${TOP}" x2="${x}" y2="${plotBottom}" stroke="${COLOURS.grid}"/>`);
    out.push(text(x, plotBottom + 16, fmt(10 ** e), 'text-anchor="middle" fill="#555"'));
  }

  // Labels go on top of bars and budget marks, with a white halo to stay legible.
  const labels: string[] = [];
  const HALO = 'paint-order="stroke" stroke="#fff" stroke-width="3" stroke-linejoin="round"';
  results.forEach((r, i) => {
    const y = TOP + i * ROW;
    const mid = y + ROW / 2;
    out.push(text(LABEL_W - 10, mid - 3, r.name, 'text-anchor="end" font-weight="bold"'));
    out.push(
      text(
        LABEL_W - 10,
        mid + 12,
        `${r.samples.toLocaleString("en")} sample${r.samples === 1 ? "" : "s"}`,
        'text-anchor="end" fill="#777" font-size="10"',
      ),
    );
    // Throughput bar.
    const tw = tx(r.throughput) - T_X;
    out.push(
      `<rect x="${T_X}" y="${y + 10}" width="${tw.toFixed(1)}" height="${ROW - 20}" fill="${COLOURS.throughput}"/>`,
    );
    const label = `${fmt(r.throughput)} ${r.throughput_unit}`;
    labels.push(text(T_X + tw + 6, mid + 4, label, `fill="#222" ${HALO}`));
    // Latency bars: p50 above, p99 below.
    const bar = (v: number, yy: number, colour: string, name: string) => {
      const w = Math.max(1, lx(v) - L_X);
      out.push(
        `<rect x="${L_X}" y="${yy}" width="${w.toFixed(1)}" height="${(ROW - 20) / 2 - 1}" fill="${colour}"/>`,
      );
      labels.push(text(L_X + w + 5, yy + 10, `${name} ${fmt(v)}`, `font-size="10" fill="#222" ${HALO}`));
    };
    bar(r.latency_ms.p50, y + 10, COLOURS.p50, "p50");
    bar(r.latency_ms.p99, y + ROW / 2, COLOURS.p99, "p99");
    // Budget marks.
    const b = budgetOf(r.name);
    if (b) {
      const marks = [tx(b.throughput * (1 - tol(r.name)))];
      if (b.p99_ms !== undefined) marks.push(lx(b.p99_ms * (1 + tol(r.name))));
      for (const x of marks)
        out.push(
          `<line x1="${x}" y1="${y + 5}" x2="${x}" y2="${y + ROW - 5}" stroke="${COLOURS.budget}" stroke-width="2" stroke-dasharray="4 3"/>`,
        );
    }
  });
  out.push(...labels);

  // Legend.
  const ly = plotBottom + 40;
  const legend: Array<[string, string, boolean]> = [
    [COLOURS.throughput, "throughput", false],
    [COLOURS.p50, "p50 latency", false],
    [COLOURS.p99, "p99 latency", false],
  ];
  if (opts.budgets)
    legend.push([COLOURS.budget, "budget bound (throughput ≥, p99 ≤, tolerance included)", true]);
  let x = T_X;
  for (const [colour, name, dashed] of legend) {
    out.push(
      dashed
        ? `<line x1="${x}" y1="${ly - 4}" x2="${x + 14}" y2="${ly - 4}" stroke="${colour}" stroke-width="2" stroke-dasharray="4 3"/>`
        : `<rect x="${x}" y="${ly - 10}" width="14" height="12" fill="${colour}"/>`,
    );
    out.push(text(x + 20, ly, name));
    x += 40 + name.length * 6.5;
  }
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
