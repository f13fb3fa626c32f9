/**
 * Are the dashboards true? Starts Shiri on its embedded defaults (own ports, data in a temp
 * folder), drives real traffic through the carrier simulators, runs a real Prometheus scraping
 * it with the real rule file, then evaluates every dashboard query and every rule against it:
 * each must parse and return data, unless grafana/README.md lists it as empty until a fault
 * happens, and its series must carry every label its legend ({{link}}) or its alert's annotations
 * ({{ $labels.link }}) name. Postgres is watched by a real postgres_exporter with the compose
 * stack's queries. Also runs promtool on the rule file and the compose Prometheus config, amtool
 * on the Alertmanager config and its routes, and checks that every alert has its runbook. Then
 * one alert, end to end: a rule fires on the faults the check provokes, a real Alertmanager running
 * grafana/alertmanager/alertmanager.yml posts it to a loopback receiver of the check's, and the
 * alert arrives with its runbook_url a link to its runbook (file:// to this checkout).
 *
 *   npm run check:dashboards      (needs prometheus, promtool, amtool, alertmanager and
 *                                  postgres_exporter: scripts/install-prometheus.sh installs them)
 *
 * Loopback only, at most three minutes; every process it starts is stopped by pid.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { embeddedDatabaseUrl } from "../src/db/embedded.ts";
import {
  type AlertReceiver,
  checkAlertmanager,
  checkRunbooks,
  readAlerts,
  renderAlertmanagerConfig,
  startAlertReceiver,
} from "./lib/alerting.ts";
import { loadDashboards, provisionedDatasourceUid, substitute } from "./lib/dashboards.ts";
import {
  compareWithReadme,
  EMPTY_UNTIL,
  PROVOKED_COUNTERS,
  PROVOKED_FAULTS,
} from "./lib/empty-until-fault.ts";
import {
  type Child,
  freePorts,
  logTail,
  startChild,
  stopChild,
  stopOrphanPostgres,
  waitFor,
} from "./lib/processes.ts";
import {
  hasData,
  missingLabels,
  PrometheusApi,
  type QueryResult,
  writeCheckConfig,
} from "./lib/prometheus.ts";
import { driveTraffic, startWebhookReceiver, type WebhookReceiver } from "./lib/traffic.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const GRAFANA = path.join(ROOT, "grafana");
const RULES = path.join(GRAFANA, "prometheus", "rules.yml");
const ALERTMANAGER = path.join(GRAFANA, "alertmanager", "alertmanager.yml");
/** Debian's name for postgres_exporter (prometheus-postgres-exporter package). */
const EXPORTER = "prometheus-postgres-exporter";
/** Debian's name for Alertmanager (prometheus-alertmanager package). */
const ALERTMANAGER_BIN = "prometheus-alertmanager";
/** Each alert's runbook_url starts with this (RUNBOOK_BASE_URL): links that open in this checkout. */
const RUNBOOK_BASE = pathToFileURL(path.join(ROOT, "docs", "runbooks")).href;
const HARD_LIMIT_MS = 150_000;
const TRAFFIC_MS = 25_000;

type Verdict = "PASS" | "EMPTY-ALLOWED" | "FAIL";
const startedAt = Date.now();
let finishing = false;
const tally: Record<Verdict, number> = { PASS: 0, "EMPTY-ALLOWED": 0, FAIL: 0 };

function report(verdict: Verdict, what: string, detail = ""): void {
  if (finishing) return; // after the summary line (interrupted): the rest is noise
  tally[verdict]++;
  process.stdout.write(`${verdict.padEnd(13)} ${what}${detail ? `  — ${detail}` : ""}\n`);
}
const info = (line: string) => process.stdout.write(`${"".padEnd(13)} ${line}\n`);

// ---- processes and temp folders, all released by cleanup() ----
const tmp = mkdtempSync(path.join(tmpdir(), "shiri-dashboards-"));
chmodSync(tmp, 0o755); // the embedded Postgres runs as the OS user "postgres" when we are root
const children: Child[] = [];
let receiver: WebhookReceiver | null = null;
let alertReceiver: AlertReceiver | null = null;
let cleaning: Promise<void> | null = null;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const child of [...children].reverse())
      await stopChild(child, child.name === "shiri" ? 20_000 : 5_000).catch(() => {});
    await stopOrphanPostgres(path.join(tmp, "data", "pg")).catch(() => {});
    await receiver?.close().catch(() => {});
    await alertReceiver?.close().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  })();
  return cleaning;
}

/** Prints the summary line, stops everything, exits non-zero on any failure. */
async function finish(code: number): Promise<never> {
  if (!finishing) {
    finishing = true;
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(0);
    process.stdout.write(
      `dashboards: ${tally.PASS} passed, ${tally.FAIL} failed, ${tally["EMPTY-ALLOWED"]} empty-allowed (${seconds} s)\n`,
    );
  }
  await cleanup(); // once: a second caller waits for the first's cleanup
  process.exit(tally.FAIL > 0 ? 1 : code);
}

const hardLimit = setTimeout(() => {
  report("FAIL", "time limit", `not done after ${HARD_LIMIT_MS / 1000} s`);
  void finish(1);
}, HARD_LIMIT_MS);
hardLimit.unref();
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    process.stderr.write(`${signal}: stopping\n`);
    void finish(130);
  });

function which(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function promtool(args: string[], what: string): void {
  try {
    execFileSync("promtool", args, { cwd: ROOT, stdio: "pipe", timeout: 30_000 });
    report("PASS", what);
  } catch (err) {
    const out = err as { stdout?: Buffer; stderr?: Buffer };
    report("FAIL", what, `${out.stdout?.toString() ?? ""}${out.stderr?.toString() ?? ""}`.trim());
  }
}

/** Checks that need no running process; the Alertmanager config is rendered for `alertWebhook`. */
function staticChecks(alertWebhook: string, renderedAlertmanager: string): { datasourceUid: string } {
  promtool(
    ["check", "rules", "grafana/prometheus/rules.yml"],
    "promtool check rules grafana/prometheus/rules.yml",
  );
  promtool(
    ["check", "config", "grafana/prometheus/prometheus.yml"],
    "promtool check config grafana/prometheus/prometheus.yml",
  );
  const datasourceUid = provisionedDatasourceUid(GRAFANA);
  if (datasourceUid) report("PASS", `provisioned datasource uid ${datasourceUid}`);
  else report("FAIL", "provisioned datasource", "no uid in grafana/provisioning/datasources/*.yml");
  const readme = compareWithReadme(path.join(GRAFANA, "README.md"));
  if (readme.length === 0)
    report("PASS", "grafana/README.md lists exactly the check's empty-until-fault queries");
  for (const problem of readme) report("FAIL", "grafana/README.md", problem);
  const alerts = readAlerts(RULES);
  const runbooks = checkRunbooks(ROOT, alerts);
  for (const problem of runbooks) report("FAIL", "runbooks", problem);
  if (runbooks.length === 0)
    report("PASS", `runbooks: docs/runbooks/<alert>.md for each of the ${alerts.length} alerts, linked`);
  const refused = renderAlertmanagerConfig(ALERTMANAGER, renderedAlertmanager, alertWebhook);
  if (refused) report("FAIL", "grafana/alertmanager/render-config.sh", refused);
  else report("PASS", "grafana/alertmanager/render-config.sh: ALERT_WEBHOOK_URL filled in");
  const routing = refused ? [] : checkAlertmanager(renderedAlertmanager, alerts);
  for (const problem of routing) report("FAIL", "grafana/alertmanager/alertmanager.yml", problem);
  if (!refused && routing.length === 0)
    report("PASS", "amtool: alertmanager.yml valid, every alert routed to a webhook receiver");
  return { datasourceUid: datasourceUid ?? "shiri-prometheus" };
}

/** The service's own process environment: nothing inherited that src/config.ts would read. */
function serviceEnv(ports: Record<string, number>, dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of ["PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ"])
    if (process.env[key] !== undefined) env[key] = process.env[key];
  return {
    ...env,
    NO_COLOR: "1",
    // Embedded defaults, moved off the default ports and folder, and on loopback only: the
    // development environment, as `npm start` runs it.
    SHIRI_ENV: "development",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    PORT: String(ports.api),
    METRICS_PORT: String(ports.metrics),
    EMBEDDED_PG_PORT: String(ports.pg),
    SMPP_ECONET_PORT: String(ports.econet),
    SMPP_NETONE_PORT: String(ports.netone),
    SMPP_TELECEL_PORT: String(ports.telecel),
    LOG_LEVEL: "warn",
    ...PROVOKED_FAULTS,
  };
}

async function main(): Promise<void> {
  const missing = ["prometheus", "promtool", "amtool", ALERTMANAGER_BIN, EXPORTER].filter(
    (tool) => !which(tool),
  );
  if (missing.length > 0) {
    report("FAIL", missing.join(", "), "not installed: run scripts/install-prometheus.sh (as root)");
    return finish(1);
  }
  alertReceiver = await startAlertReceiver();
  const renderedAlertmanager = path.join(tmp, "alertmanager.yml");
  const { datasourceUid } = staticChecks(alertReceiver.url, renderedAlertmanager);
  const dashboards = loadDashboards(path.join(GRAFANA, "dashboards"), datasourceUid);
  for (const problem of dashboards.problems) report("FAIL", "dashboard JSON", problem);
  if (dashboards.problems.length === 0)
    report("PASS", `dashboard JSON: ${dashboards.files.join(", ")} (${dashboards.queries.length} queries)`);

  // ---- Shiri, on its embedded defaults ----
  const [api, metrics, pg, econet, netone, telecel, prom, exporter, am] = await freePorts(9);
  const ports = { api, metrics, pg, econet, netone, telecel, prom, exporter } as Record<string, number>;
  const dataDir = path.join(tmp, "data");
  const spawnedAt = Date.now();
  const shiri = startChild("shiri", process.execPath, ["bin/shiri.mjs", "start"], {
    cwd: ROOT,
    env: serviceEnv(ports, dataDir),
    logPath: path.join(tmp, "shiri.log"),
  });
  children.push(shiri);
  let apiKey: string;
  let senderId: string;
  try {
    apiKey = (await shiri.waitForOutput(/api key\s*:\s*(shr_\S+)/, 90_000))[1] ?? "";
    senderId = (await shiri.waitForOutput(/sender id\s*:\s*(\S+)/, 5_000))[1] ?? "";
    await waitFor("the metrics endpoint", 20_000, async () =>
      (await fetch(`http://127.0.0.1:${metrics}/metrics`)).ok ? true : undefined,
    );
  } catch (err) {
    report("FAIL", "start shiri", `${String(err)}\n${logTail(shiri.logPath)}`);
    return finish(1);
  }
  info(`shiri up in ${((Date.now() - spawnedAt) / 1000).toFixed(1)} s (api :${api}, metrics :${metrics})`);

  // ---- postgres_exporter on its database, with the compose stack's extra queries ----
  const postgresExporter = startChild(
    "postgres_exporter",
    EXPORTER,
    [`--web.listen-address=127.0.0.1:${exporter}`, "--log.level=warn"],
    {
      cwd: tmp,
      env: {
        PATH: process.env.PATH,
        DATA_SOURCE_NAME: `${embeddedDatabaseUrl(Number(pg), "shiri")}?sslmode=disable`,
        PG_EXPORTER_EXTEND_QUERY_PATH: path.join(GRAFANA, "postgres-exporter", "queries.yml"),
      },
      logPath: path.join(tmp, "postgres-exporter.log"),
    },
  );
  children.push(postgresExporter);

  // ---- Alertmanager on the rendered alertmanager.yml, its group_wait cut from 30 s to 1 s ----
  const liveAlertmanager = path.join(tmp, "alertmanager-live.yml");
  writeFileSync(
    liveAlertmanager,
    readFileSync(renderedAlertmanager, "utf8").replace(/^(\s*group_wait:)\s*\S+/m, "$1 1s"),
  );
  mkdirSync(path.join(tmp, "alertmanager"));
  const alertmanager = startChild(
    "alertmanager",
    ALERTMANAGER_BIN,
    [
      `--config.file=${liveAlertmanager}`,
      `--storage.path=${path.join(tmp, "alertmanager")}`,
      `--web.listen-address=127.0.0.1:${am}`,
      "--cluster.listen-address=", // one Alertmanager: no gossip
      "--log.level=warn",
    ],
    { cwd: tmp, env: { PATH: process.env.PATH }, logPath: path.join(tmp, "alertmanager.log") },
  );
  children.push(alertmanager);

  // ---- Prometheus, scraping both every second with the real rules ----
  const promConfig = path.join(tmp, "prometheus.yml");
  writeCheckConfig(promConfig, {
    target: `127.0.0.1:${metrics}`,
    postgresExporter: `127.0.0.1:${exporter}`,
    rulesFile: RULES,
    alertmanager: `127.0.0.1:${am}`,
  });
  promtool(["check", "config", promConfig], "promtool check config (the check's own scrape config)");
  mkdirSync(path.join(tmp, "tsdb"));
  const prometheus = startChild(
    "prometheus",
    "prometheus",
    [
      `--config.file=${promConfig}`,
      `--storage.tsdb.path=${path.join(tmp, "tsdb")}`,
      `--web.listen-address=127.0.0.1:${prom}`,
      "--enable-feature=expand-external-labels",
      "--log.level=warn",
    ],
    {
      cwd: tmp,
      env: { PATH: process.env.PATH, RUNBOOK_BASE_URL: RUNBOOK_BASE },
      logPath: path.join(tmp, "prometheus.log"),
    },
  );
  children.push(prometheus);
  const promApi = new PrometheusApi(`http://127.0.0.1:${prom}`);
  try {
    await waitFor("prometheus to be ready", 30_000, async () => ((await promApi.ready()) ? true : undefined));
    await waitFor("the shiri and postgres_exporter targets to be up", 20_000, async () => {
      const targets = await promApi.targets();
      return targets.length > 0 && targets.every((t) => t.health === "up") ? true : undefined;
    });
  } catch (err) {
    report("FAIL", "start prometheus", `${String(err)}\n${logTail(prometheus.logPath)}`);
    return finish(1);
  }

  // ---- Traffic ----
  receiver = await startWebhookReceiver(5);
  const traffic = await driveTraffic({
    apiBase: `http://127.0.0.1:${api}`,
    apiKey,
    senderId,
    webhookUrl: receiver.url,
    durationMs: TRAFFIC_MS,
  });
  const statuses = Object.entries(traffic.byStatus)
    .map(([s, n]) => `${s}×${n}`)
    .join(" ");
  info(`traffic: ${traffic.requests} requests (${statuses}), ${traffic.messages} messages accepted`);
  if (traffic.problems.length === 0) report("PASS", "traffic: every request answered as expected");
  for (const problem of traffic.problems) report("FAIL", "traffic", problem);

  // ---- Settle: the queues drain, the samplers and every rule have run on the result ----
  try {
    await waitFor(
      "the dispatch queues to drain",
      40_000,
      async () => {
        const r = await promApi.query(
          "max(shiri_dispatch_queue_jobs) == 0 and max(shiri_holds_outstanding) == 0",
        );
        return hasData(r) ? true : undefined;
      },
      1_000,
    );
    await waitFor("every rule to be evaluated", 10_000, async () => {
      const rules = await promApi.rules();
      return rules.length > 0 && rules.every((r) => r.health !== "unknown") ? true : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // a few more scrapes of the settled state
  } catch (err) {
    report("FAIL", "settle", String(err));
  }
  // The counters the fault panels rest on, provoked by the check itself: the SMPP link drops
  // (SIM_NETONE_DROP_AFTER_SUBMITS) must have been counted, and recovered from.
  for (const [what, expr] of PROVOKED_COUNTERS) {
    const result = await promApi.query(expr);
    if (hasData(result)) report("PASS", what, expr);
    else report("FAIL", what, `no data: ${expr}`);
  }

  const cb = receiver.received();
  info(`callbacks received: ${cb.total} (${cb.refused} answered 503 on purpose)`);
  if (cb.total === 0) report("FAIL", "callbacks", "the webhook receiver got no callback");

  // ---- Every dashboard query ----
  const values = new Map<string, string>();
  for (const [name, v] of dashboards.variables) {
    const found = await promApi.labelValues(v.label, v.metric);
    if (found.length === 0)
      report("FAIL", `variable $${name}`, `label_values(${v.metric}, ${v.label}) is empty`);
    else report("PASS", `variable $${name}`, found.join(", "));
    // "All" with every value selected, as Grafana formats a multi-value variable for a regex matcher.
    values.set(name, `(${found.join("|")})`);
  }
  const allowed = new Map(EMPTY_UNTIL.map((e) => [e.key, e]));
  const seen = new Set<string>();
  // `named`: the labels a legend or an alert's annotations name series by; every series needs them.
  const judge = (
    key: string,
    expr: string,
    result: QueryResult,
    note = "",
    named: { by: string; labels: string[] } = { by: "", labels: [] },
  ) => {
    seen.add(key);
    const entry = allowed.get(key);
    if (!result.ok) return report("FAIL", key, `${result.error}\n${"".padEnd(16)}${expr}`);
    const series = result.scalar !== undefined ? "scalar" : `${result.samples.length} series`;
    const missing = missingLabels(result, named.labels);
    if (missing.length > 0)
      return report(
        "FAIL",
        key,
        `${series} without the label ${missing.join(", ")} that ${named.by}\n${"".padEnd(16)}${expr}`,
      );
    if (hasData(result)) {
      const stale =
        entry && entry.kind !== "provoked" ? ` (listed as empty until ${entry.until}: remove it)` : "";
      return report("PASS", key, `${series}${note}${stale}`);
    }
    if (entry && entry.kind !== "provoked")
      return report("EMPTY-ALLOWED", key, `${entry.kind}: empty until ${entry.until}${note}`);
    const why = entry ? `no data, though the check provokes it: ${entry.until}` : "no data";
    return report("FAIL", key, `${why}${note}\n${"".padEnd(16)}${expr}`);
  };
  for (const q of dashboards.queries) {
    const expr = substitute(q.expr, values);
    judge(q.key, expr, await promApi.query(expr), "", { by: "its legend names", labels: q.legendLabels });
  }

  // ---- Every rule, as Prometheus loaded it ----
  const rules = await promApi.rules();
  if (rules.length === 0) report("FAIL", "rules", "prometheus loaded no rules");
  for (const rule of rules) {
    const key = `rule / ${rule.name}`;
    if (rule.health !== "ok") {
      seen.add(key);
      report("FAIL", key, `health ${rule.health}: ${rule.lastError ?? ""}`);
      continue;
    }
    if (rule.type === "recording") {
      judge(key, rule.query, await promApi.query(rule.query));
      continue;
    }
    // An alert is quiet on a healthy system; what it compares must still have data.
    const full = await promApi.query(rule.query);
    const m = rule.query.match(/^([\s\S]*\S)\s*(==|!=|>=|<=|>|<)\s*(?:bool\s+)?(-?[\d.eE+]+)\s*$/);
    if (!full.ok || !m?.[1]) {
      seen.add(key);
      report("FAIL", key, full.ok ? "not of the form `<signal> <comparison> <number>`" : full.error);
      continue;
    }
    const firing = hasData(full) ? `, firing for ${full.samples.length} series` : ", quiet";
    // Its summary and description name labels ({{ $labels.link }}): the signal must keep them.
    const annotated = Object.values(rule.annotations ?? {}).flatMap((text) =>
      [...text.matchAll(/\$labels\.(\w+)/g)].map((a) => a[1] ?? ""),
    );
    judge(key, m[1], await promApi.query(m[1]), `${firing} (${rule.state ?? "?"})`, {
      by: "its annotations name",
      labels: annotated,
    });
  }
  for (const e of EMPTY_UNTIL)
    if (!seen.has(e.key)) report("FAIL", e.key, "listed as empty until a fault happens, but no such query");

  await alertEndToEnd(promApi, alertmanager.logPath);

  if (tally.FAIL > 0) process.stdout.write(`shiri log (tail):\n${logTail(shiri.logPath)}\n`);
  return finish(0);
}

/**
 * One alert, end to end: the rules fire on the check's provoked faults (the SMPP link drops make
 * ShiriSmppLinkFlapping fire), Prometheus sends them to Alertmanager, which posts them to the
 * check's receiver through the real alertmanager.yml; each arrives with a runbook link that opens.
 */
async function alertEndToEnd(promApi: PrometheusApi, alertmanagerLog: string): Promise<void> {
  const drops = await promApi.query('sum(shiri_smpp_link_events_total{event="disconnect"})');
  info(`SMPP disconnects provoked: ${drops.ok ? (drops.samples[0]?.value?.[1] ?? "0") : "?"}`);
  const firing = (await promApi.alerts()).filter((a) => a.state === "firing");
  const names = [...new Set(firing.map((a) => a.labels.alertname ?? "?"))];
  if (names.length === 0) {
    report(
      "FAIL",
      "alert end to end",
      "no alert fired (the provoked SMPP drops should fire ShiriSmppLinkFlapping)",
    );
    return;
  }
  const received = () =>
    (alertReceiver?.posts() ?? []).flatMap((post) =>
      post.alerts.filter((a) => a.status === "firing").map((a) => ({ post, alert: a })),
    );
  try {
    await waitFor("Alertmanager to post the firing alerts", 30_000, async () =>
      names.every((n) => received().some((r) => r.alert.labels.alertname === n)) ? true : undefined,
    );
  } catch {
    const got = [...new Set(received().map((r) => r.alert.labels.alertname))].join(", ") || "nothing";
    report(
      "FAIL",
      "alert end to end",
      `firing: ${names.join(", ")}; received: ${got}\n${logTail(alertmanagerLog)}`,
    );
    return;
  }
  for (const name of names) {
    const hit = received().find((r) => r.alert.labels.alertname === name);
    if (!hit) continue;
    const link = hit.alert.annotations.runbook_url ?? "";
    const want = `${RUNBOOK_BASE}/${name}.md`;
    const problems = [
      hit.post.receiver === "oncall-webhook" ? "" : `receiver ${hit.post.receiver}, not oncall-webhook`,
      link === want ? "" : `runbook_url ${link || "missing"}, not ${want}`,
      link.startsWith("file:") && existsSync(fileURLToPath(link)) ? "" : `${link} does not open`,
      "runbooks" in hit.alert.labels ? "the runbooks external label reached Alertmanager" : "",
    ].filter(Boolean);
    if (problems.length > 0) report("FAIL", `alert end to end: ${name}`, problems.join("; "));
    else report("PASS", `alert end to end: ${name} fired, posted by Alertmanager to the receiver`, link);
  }
}

main().catch(async (err: unknown) => {
  report("FAIL", "check-dashboards", err instanceof Error ? (err.stack ?? err.message) : String(err));
  await finish(1);
});
