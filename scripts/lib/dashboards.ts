/**
 * The dashboards as the check reads them: every panel target's query, keyed the way
 * grafana/README.md names it, with Grafana's variables replaced by concrete values.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

interface Target {
  refId?: string;
  expr?: string;
  legendFormat?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id?: number;
  type?: string;
  title?: string;
  targets?: Target[];
  panels?: Panel[];
  datasource?: { type?: string; uid?: string };
}
interface Variable {
  name: string;
  type: string;
  query?: string | { query?: string };
}
interface Dashboard {
  uid?: string;
  title?: string;
  panels?: Panel[];
  templating?: { list?: Variable[] };
}

export interface PanelQuery {
  /** `<dashboard uid> / <panel title>`, plus ` / <refId>` when the panel has several queries. */
  key: string;
  expr: string;
  /** Variables this query uses, by name. */
  variables: string[];
  /** Labels the legend names its series by (`{{link}}`): every series must carry them. */
  legendLabels: string[];
}

export interface LoadedDashboards {
  queries: PanelQuery[];
  /** Variable name → the Prometheus `label_values(metric, label)` it is filled from. */
  variables: Map<string, { metric: string; label: string }>;
  /** Structural faults: a missing uid, a panel without queries, a foreign datasource… */
  problems: string[];
  files: string[];
}

/** The datasource uid the provisioning file declares (grafana/provisioning/datasources/*.yml). */
export function provisionedDatasourceUid(grafanaDir: string): string | null {
  const dir = path.join(grafanaDir, "provisioning", "datasources");
  for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))) {
    const match = readFileSync(path.join(dir, file), "utf8").match(/^\s*uid:\s*["']?([\w-]+)["']?\s*$/m);
    if (match?.[1]) return match[1];
  }
  return null;
}

export function loadDashboards(dashboardsDir: string, datasourceUid: string): LoadedDashboards {
  const out: LoadedDashboards = { queries: [], variables: new Map(), problems: [], files: [] };
  const uids = new Set<string>();
  for (const file of readdirSync(dashboardsDir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    out.files.push(file);
    let dash: Dashboard;
    try {
      dash = JSON.parse(readFileSync(path.join(dashboardsDir, file), "utf8")) as Dashboard;
    } catch (err) {
      out.problems.push(`${file}: not JSON: ${String(err)}`);
      continue;
    }
    const uid = dash.uid ?? "";
    if (!uid || !dash.title) out.problems.push(`${file}: needs a uid and a title`);
    if (uids.has(uid)) out.problems.push(`${file}: uid ${uid} used twice`);
    uids.add(uid);
    for (const v of dash.templating?.list ?? []) {
      const q = typeof v.query === "string" ? v.query : v.query?.query;
      const m = q?.match(/^label_values\(\s*([a-zA-Z_:][\w:]*)\s*,\s*(\w+)\s*\)$/);
      if (v.type === "query" && m?.[1] && m[2]) out.variables.set(v.name, { metric: m[1], label: m[2] });
      else
        out.problems.push(
          `${file}: variable ${v.name}: only label_values(metric, label) queries are checked`,
        );
    }
    const ids = new Set<number>();
    const titles = new Set<string>();
    const panels = (dash.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
    for (const p of panels) {
      if (p.id !== undefined) {
        if (ids.has(p.id)) out.problems.push(`${file}: panel id ${p.id} used twice`);
        ids.add(p.id);
      }
      if (p.type === "row") continue;
      const title = p.title ?? "";
      if (!title || titles.has(title))
        out.problems.push(`${file}: panel titles must be unique and set ("${title}")`);
      titles.add(title);
      const targets = p.targets ?? [];
      if (targets.length === 0) out.problems.push(`${file}: panel "${title}" has no queries`);
      for (const ds of [p.datasource, ...targets.map((t) => t.datasource)])
        if (ds && ds.uid !== datasourceUid)
          out.problems.push(`${file}: panel "${title}" uses datasource ${ds.uid}, not ${datasourceUid}`);
      for (const t of targets) {
        if (!t.expr?.trim()) {
          out.problems.push(`${file}: panel "${title}" query ${t.refId ?? "?"} has no expr`);
          continue;
        }
        const key = targets.length > 1 ? `${uid} / ${title} / ${t.refId}` : `${uid} / ${title}`;
        const variables = [...t.expr.matchAll(/\$\{?(\w+)/g)]
          .map((m) => m[1] ?? "")
          .filter((n) => !n.startsWith("__"));
        const legendLabels = [...(t.legendFormat ?? "").matchAll(/\{\{\s*(\w+)\s*\}\}/g)]
          .map((m) => m[1] ?? "")
          .filter((n) => n && !n.startsWith("__"));
        out.queries.push({ key, expr: t.expr, variables, legendLabels });
      }
    }
  }
  return out;
}

/** Grafana's built-in intervals, as Grafana would fill them for a 1 s scrape and a recent range. */
const BUILT_IN: Record<string, string> = {
  __rate_interval: "1m",
  __interval: "15s",
  __range: "5m",
};

/** Replaces $var / ${var} with concrete values (a multi-value variable becomes a regex alternation). */
export function substitute(expr: string, values: Map<string, string>): string {
  return expr.replace(
    /\$\{(\w+)(?::\w+)?\}|\$(\w+)/g,
    (whole, braced: string | undefined, bare: string | undefined) => {
      const name = braced ?? bare ?? "";
      return BUILT_IN[name] ?? values.get(name) ?? whole;
    },
  );
}
