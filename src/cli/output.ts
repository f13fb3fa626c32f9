import type { Format } from "./args.ts";

/**
 * What a data command prints: its result as one line of JSON (for scripts), or as aligned columns
 * (for people): a list one row per item under a header, a single object one field per line.
 */
export function render(result: object, format: Format, columns?: readonly string[]): string {
  if (format === "json") return `${JSON.stringify(result)}\n`;
  if (Array.isArray(result)) return listTable(result, columns);
  return fieldTable(flatten(result as Record<string, unknown>));
}

function listTable(items: readonly unknown[], columns?: readonly string[]): string {
  if (items.length === 0) return "(none)\n";
  const records = items.map((item) => flatten(isRecord(item) ? item : { value: item }));
  const names = columns ?? [...new Set(records.flatMap((r) => Object.keys(r)))];
  const rows = [names, ...records.map((r) => names.map((n) => cell(r[n])))];
  return columnsOf(rows);
}

function fieldTable(record: Record<string, unknown>): string {
  return columnsOf(Object.entries(record).map(([name, value]) => [name, cell(value)]));
}

/** Rows of cells padded to each column's widest cell, two spaces apart, no trailing blanks. */
function columnsOf(rows: ReadonlyArray<readonly string[]>): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, c] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, c.length);
  }
  const lines = rows.map((row) =>
    row
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
  return `${lines.join("\n")}\n`;
}

/** Nested objects become dotted fields (`balance_mismatches.total`), so every field is one cell. */
function flatten(record: Record<string, unknown>, prefix = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (isRecord(value)) Object.assign(out, flatten(value, `${prefix}${key}.`));
    else out[`${prefix}${key}`] = value;
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.length === 0 ? "-" : value.map(item).join(", ");
  if (isRecord(value)) return JSON.stringify(value);
  return String(value).replace(/\s+/g, " ");
}

/** One item of a list inside a cell: `SHIRI verified` for {address, verification_status}. */
function item(value: unknown): string {
  return isRecord(value) ? Object.values(value).map(cell).join(" ") : cell(value);
}
