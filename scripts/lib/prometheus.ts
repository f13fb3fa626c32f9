/** A throwaway Prometheus for the dashboard check: its config, and the bits of its HTTP API we use. */
import { writeFileSync } from "node:fs";

/** Scrapes the service and postgres_exporter every second; the real rule file, evaluated every second too. */
export function writeCheckConfig(
  path: string,
  opts: { target: string; postgresExporter: string; rulesFile: string; alertmanager: string },
): void {
  writeFileSync(
    path,
    [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "  evaluation_interval: 1s",
      // As grafana/prometheus/prometheus.yml has it: the runbooks' base from RUNBOOK_BASE_URL
      // (--enable-feature=expand-external-labels), dropped from the alerts once annotated.
      "  external_labels:",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Prometheus expands it, not JavaScript
      "    runbooks: ${RUNBOOK_BASE_URL}",
      "alerting:",
      "  alert_relabel_configs:",
      "    - action: labeldrop",
      "      regex: runbooks",
      "  alertmanagers:",
      "    - static_configs:",
      `        - targets: [${JSON.stringify(opts.alertmanager)}]`,
      "rule_files:",
      `  - ${JSON.stringify(opts.rulesFile)}`,
      "scrape_configs:",
      // A job name that the rules' job=~"shiri-.*" matches, as the compose jobs do.
      "  - job_name: shiri-all",
      "    static_configs:",
      `      - targets: [${JSON.stringify(opts.target)}]`,
      "        labels: { role: all }",
      // The compose stack's job name for it (grafana/prometheus/prometheus.yml).
      "  - job_name: shiri-postgres",
      "    static_configs:",
      `      - targets: [${JSON.stringify(opts.postgresExporter)}]`,
      "",
    ].join("\n"),
  );
}

export interface Sample {
  metric: Record<string, string>;
  value?: [number, string];
  values?: Array<[number, string]>;
}

export type QueryResult =
  | { ok: true; resultType: string; samples: Sample[]; scalar?: string }
  | { ok: false; error: string };

export class PrometheusApi {
  constructor(readonly base: string) {}

  private async get(path: string, params: Record<string, string | string[]> = {}): Promise<unknown> {
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(params))
      for (const one of Array.isArray(v) ? v : [v]) url.searchParams.append(k, one);
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    return res.json();
  }

  async ready(): Promise<boolean> {
    const res = await fetch(new URL("/-/ready", this.base), { signal: AbortSignal.timeout(2_000) });
    return res.ok;
  }

  async query(expr: string): Promise<QueryResult> {
    const body = (await this.get("/api/v1/query", { query: expr })) as {
      status: string;
      error?: string;
      errorType?: string;
      data?: { resultType: string; result: unknown };
    };
    if (body.status !== "success" || !body.data)
      return { ok: false, error: `${body.errorType ?? "error"}: ${body.error ?? "no data field"}` };
    const { resultType, result } = body.data;
    if (resultType === "scalar" || resultType === "string") {
      const [, value] = result as [number, string];
      return { ok: true, resultType, samples: [], scalar: value };
    }
    return { ok: true, resultType, samples: result as Sample[] };
  }

  async labelValues(label: string, match: string): Promise<string[]> {
    const body = (await this.get(`/api/v1/label/${encodeURIComponent(label)}/values`, {
      "match[]": match,
    })) as {
      status: string;
      data?: string[];
    };
    return body.status === "success" ? (body.data ?? []) : [];
  }

  async targets(): Promise<Array<{ health: string; lastError: string; scrapeUrl: string }>> {
    const body = (await this.get("/api/v1/targets", { state: "active" })) as {
      data?: { activeTargets?: Array<{ health: string; lastError: string; scrapeUrl: string }> };
    };
    return body.data?.activeTargets ?? [];
  }

  /** The alerts pending or firing now. */
  async alerts(): Promise<Array<{ state: string; labels: Record<string, string> }>> {
    const body = (await this.get("/api/v1/alerts")) as {
      data?: { alerts?: Array<{ state: string; labels: Record<string, string> }> };
    };
    return body.data?.alerts ?? [];
  }

  async rules(): Promise<LoadedRule[]> {
    const body = (await this.get("/api/v1/rules")) as {
      data?: { groups?: Array<{ name: string; file: string; rules: LoadedRule[] }> };
    };
    return (body.data?.groups ?? []).flatMap((g) => g.rules.map((r) => ({ ...r, group: g.name })));
  }
}

export interface LoadedRule {
  group: string;
  name: string;
  query: string;
  type: "alerting" | "recording";
  /** An alert's annotations as written (templates unexpanded). */
  annotations?: Record<string, string>;
  health: "ok" | "err" | "unknown";
  lastError?: string;
  state?: string;
}

/**
 * The labels some series of a result lacks: a legend's `{{link}}` or an alert's
 * `{{ $labels.link }}` names a label the query does not keep (grouped by another, or the metric
 * has no such label), and would show empty.
 */
export function missingLabels(result: QueryResult, labels: readonly string[]): string[] {
  if (!result.ok) return [];
  return [...new Set(labels)].filter((label) => result.samples.some((s) => s.metric[label] === undefined));
}

/** True when a query returned at least one sample that is a number (NaN is what an idle histogram gives). */
export function hasData(result: QueryResult): boolean {
  if (!result.ok) return false;
  if (result.scalar !== undefined) return !Number.isNaN(Number(result.scalar));
  return result.samples.some((s) => {
    const values = s.values ?? (s.value ? [s.value] : []);
    return values.some(([, v]) => !Number.isNaN(Number(v)));
  });
}
