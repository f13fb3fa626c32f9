/** Small helpers shared by the bench scripts: statistics and a Markdown table. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;

export function markdownTable(
  header: readonly string[],
  rows: ReadonlyArray<readonly (string | number)[]>,
): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.map(String).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export interface Target {
  name: string;
  /** "≥" when more is better, "≤" when less is. */
  direction: "≥" | "≤";
  target: number;
  actual: number;
  unit: string;
}

export function judge(t: Target): { met: boolean; margin: string } {
  const met = t.direction === "≥" ? t.actual >= t.target : t.actual <= t.target;
  const diff = t.actual - t.target;
  const pct = t.target === 0 ? 0 : (diff / t.target) * 100;
  const sign = diff >= 0 ? "+" : "−";
  return {
    met,
    margin: `${sign}${round(Math.abs(diff), 1)} ${t.unit} (${sign}${round(Math.abs(pct), 1)} %)`,
  };
}
