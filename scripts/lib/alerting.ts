/**
 * The alerting side of the check: every alert in grafana/prometheus/rules.yml has a runbook
 * (docs/runbooks/<alert>.md, linked by its runbook_url annotation, RUNBOOK_LINK) and every runbook
 * an alert; grafana/alertmanager/alertmanager.yml, rendered by its render-config.sh, is valid
 * (`amtool check-config`) and routes every alert, by its severity, to a receiver that posts to a
 * webhook (`amtool config routes test`); and a loopback receiver for the end-to-end run, where a
 * real Alertmanager posts a real alert to it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

/** Each alert's runbook_url: the runbooks' base (prometheus.yml's external label) and the page. */
const RUNBOOK_LINK = (alert: string) => `{{ $externalLabels.runbooks }}/${alert}.md`;

export interface AlertRule {
  name: string;
  severity: string | undefined;
  runbookUrl: string | undefined;
}

/** The alerts of a rule file as written (each `- alert:` block up to the next rule). */
export function readAlerts(rulesPath: string): AlertRule[] {
  const text = readFileSync(rulesPath, "utf8");
  const blocks = text.split(/^\s*- (?=alert:|record:)/m).filter((b) => b.startsWith("alert:"));
  return blocks.map((block) => {
    const value = (key: string) =>
      block.match(new RegExp(`^\\s*${key}:\\s*["']?([^"'\\n]+?)["']?\\s*$`, "m"))?.[1];
    return { name: value("alert") ?? "?", severity: value("severity"), runbookUrl: value("runbook_url") };
  });
}

/** Problems with the runbooks: missing, misnamed, or left over from a removed alert. */
export function checkRunbooks(root: string, alerts: readonly AlertRule[]): string[] {
  const problems: string[] = [];
  const dir = path.join(root, "docs", "runbooks");
  for (const alert of alerts) {
    const want = `docs/runbooks/${alert.name}.md`;
    if (alert.runbookUrl !== RUNBOOK_LINK(alert.name))
      problems.push(
        `${alert.name}: runbook_url is ${alert.runbookUrl ?? "missing"}, not ${RUNBOOK_LINK(alert.name)}`,
      );
    const file = path.join(root, want);
    if (!existsSync(file)) problems.push(`${alert.name}: ${want} does not exist`);
    else if (!readFileSync(file, "utf8").startsWith(`# ${alert.name}`))
      problems.push(`${want}: its title is not "# ${alert.name}"`);
  }
  const names = new Set(alerts.map((a) => a.name));
  for (const file of existsSync(dir) ? readdirSync(dir) : [])
    if (file.endsWith(".md") && file !== "README.md" && !names.has(file.slice(0, -3)))
      problems.push(`docs/runbooks/${file}: no alert of that name in rules.yml`);
  return problems;
}

function amtool(args: string[]): { ok: boolean; out: string } {
  try {
    const out = execFileSync("amtool", args, { stdio: "pipe", timeout: 30_000 }).toString();
    return { ok: true, out };
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    return { ok: false, out: `${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}` };
  }
}

/** The receivers of an Alertmanager config that have webhook_configs (read as written). */
function webhookReceivers(configPath: string): Set<string> {
  const text = readFileSync(configPath, "utf8");
  const section = text.slice(text.search(/^receivers:/m));
  const found = new Set<string>();
  for (const block of section.split(/^\s*- name:\s*/m).slice(1)) {
    const name = block
      .split("\n")[0]
      ?.trim()
      .replace(/^["']|["']$/g, "");
    if (name && /^\s*webhook_configs:/m.test(block) && /^\s*- url:\s*\S+/m.test(block)) found.add(name);
  }
  return found;
}

/**
 * grafana/alertmanager/alertmanager.yml with its webhook filled in, by the script the compose
 * stack runs (render-config.sh): its error when it refuses.
 */
export function renderAlertmanagerConfig(template: string, out: string, webhookUrl: string): string | null {
  try {
    execFileSync("sh", [path.join(path.dirname(template), "render-config.sh"), template, out], {
      env: { PATH: process.env.PATH, ALERT_WEBHOOK_URL: webhookUrl },
      stdio: "pipe",
      timeout: 10_000,
    });
    return null;
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    return e.stderr?.toString().trim() || e.message;
  }
}

/** Problems with the (rendered) Alertmanager config and with where each alert goes. */
export function checkAlertmanager(configPath: string, alerts: readonly AlertRule[]): string[] {
  const checked = amtool(["check-config", configPath]);
  if (!checked.ok) return [`amtool check-config: ${checked.out.trim()}`];
  const webhooks = webhookReceivers(configPath);
  const problems: string[] = [];
  for (const alert of alerts) {
    if (!alert.severity) problems.push(`${alert.name}: no severity label`);
    const routed = amtool([
      "config",
      "routes",
      "test",
      `--config.file=${configPath}`,
      `alertname=${alert.name}`,
      `severity=${alert.severity ?? ""}`,
    ]);
    const receivers = routed.out
      .split("\n")[0]
      ?.split(",")
      .map((r) => r.trim())
      .filter(Boolean);
    if (!routed.ok || !receivers?.length) problems.push(`${alert.name}: amtool routes it nowhere`);
    else
      for (const receiver of receivers)
        if (!webhooks.has(receiver))
          problems.push(`${alert.name}: routed to ${receiver}, which has no webhook`);
  }
  return problems;
}

/** What Alertmanager's webhook posts (version 4), the fields the check reads. */
export interface AlertmanagerPost {
  receiver: string;
  status: string;
  alerts: Array<{ status: string; labels: Record<string, string>; annotations: Record<string, string> }>;
}

export interface AlertReceiver {
  url: string;
  posts(): AlertmanagerPost[];
  close(): Promise<void>;
}

/** A loopback webhook that keeps every JSON body Alertmanager posts to it and answers 200. */
export function startAlertReceiver(): Promise<AlertReceiver> {
  const posts: AlertmanagerPost[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        posts.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as AlertmanagerPost);
        res.writeHead(200).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/alerts?via=shiri&check=1`,
        posts: () => [...posts],
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
