/**
 * docker-compose.yml cannot be run here (no Docker engine), so it is checked against the code
 * instead, with its ${VAR} substituted from .env.example as `docker compose` would from .env:
 * every variable it gives Shiri is one src/config.ts reads and accepts, every SIM_* one the
 * simulator reads; the workers' SMPP ports are the simulator's; Prometheus scrapes the
 * METRICS_PORT the services use; Grafana's datasource names the Prometheus service. And what an
 * SRE expects: every substituted variable documented in .env.example (and no password filled
 * in there), a restart policy on every service, a /readyz healthcheck on every Shiri role on
 * the port it serves it, Grafana without anonymous access.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { CARRIERS, OPERATORS } from "../../carriers/index.ts";
import { overridesFromEnv } from "../../carriers/simulator/main.ts";
import { loadConfig } from "../../src/config.ts";

type Yaml = string | Yaml[] | { [key: string]: Yaml };

/**
 * The YAML docker-compose.yml is written in, and no more: block mappings, block and flow
 * sequences of scalars, quoted or plain scalars, comments, `&anchor` on a mapping and `<<: *anchor`.
 * Anything else is an error, so the check never reads the file differently from Docker.
 */
export function readComposeYaml(text: string): { [key: string]: Yaml } {
  const anchors = new Map<string, { [key: string]: Yaml }>();
  const lines = text
    .split("\n")
    .map((raw, i) => ({ n: i + 1, indent: raw.search(/\S/), text: raw.replace(/\s+#.*$/, "").trimEnd() }))
    .filter((l) => l.indent >= 0 && !l.text.trimStart().startsWith("#") && l.text.trim() !== "");
  let i = 0;
  const scalar = (s: string): string => {
    const t = s.trim();
    if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")))
      return t.slice(1, -1);
    return t;
  };
  const flow = (s: string): Yaml[] =>
    s
      .slice(1, -1)
      .split(",")
      .map((x) => scalar(x))
      .filter((x) => x !== "");
  const block = (indent: number): Yaml => {
    const first = lines[i];
    if (first?.text.trimStart().startsWith("- ")) {
      const seq: Yaml[] = [];
      while (lines[i] && lines[i]?.indent === indent && lines[i]?.text.trimStart().startsWith("- ")) {
        seq.push(scalar(lines[i]?.text.trimStart().slice(2) ?? ""));
        i++;
      }
      return seq;
    }
    const map: { [key: string]: Yaml } = {};
    while (lines[i] && (lines[i]?.indent ?? 0) === indent) {
      const line = lines[i] as { n: number; indent: number; text: string };
      const m = line.text.trim().match(/^("[^"]+"|[\w.<-]+):(?:\s+(.*))?$/);
      if (!m?.[1]) throw new Error(`docker-compose.yml:${line.n}: cannot read "${line.text.trim()}"`);
      const key = scalar(m[1]);
      const rest = (m[2] ?? "").trim();
      i++;
      if (key === "<<") {
        const anchored = anchors.get(rest.replace(/^\*/, ""));
        if (!anchored) throw new Error(`docker-compose.yml:${line.n}: unknown anchor ${rest}`);
        Object.assign(map, anchored);
      } else if (rest === "" || rest.startsWith("&")) {
        const next = lines[i];
        const value = next && next.indent > indent ? block(next.indent) : "";
        if (rest.startsWith("&") && typeof value === "object" && !Array.isArray(value))
          anchors.set(rest.slice(1), value);
        map[key] = value;
      } else map[key] = rest.startsWith("[") ? flow(rest) : scalar(rest);
    }
    const stray = lines[i];
    if (stray && stray.indent > indent)
      throw new Error(`docker-compose.yml:${stray.n}: unexpected indentation`);
    return map;
  };
  const doc = block(0);
  if (typeof doc !== "object" || Array.isArray(doc)) throw new Error("docker-compose.yml: not a mapping");
  return doc;
}

const asMap = (y: Yaml | undefined): { [key: string]: Yaml } =>
  y && typeof y === "object" && !Array.isArray(y) ? y : {};
const asStrings = (y: Yaml | undefined): string[] =>
  Array.isArray(y) ? y.map(String) : y ? [String(y)] : [];

/** The variable names src/config.ts's envSchema declares (read from the source: the schema is not exported). */
function serviceVariables(root: string): Set<string> {
  const source = readFileSync(path.join(root, "src", "config.ts"), "utf8");
  const body = source.slice(
    source.indexOf("const envSchema = z.object({"),
    source.indexOf("\n});", source.indexOf("const envSchema")),
  );
  const names = new Set([...body.matchAll(/^\s{2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1] ?? ""));
  for (const op of OPERATORS)
    for (const field of Object.keys(CARRIERS[op].smpp))
      names.add(`SMPP_${op.toUpperCase()}_${field.toUpperCase()}`);
  return names;
}

/** KEY=value lines of an env file; values may refer to earlier keys (${KEY}), as in compose's .env. */
export function readEnvFile(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = line.match(/^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/);
    if (m?.[1]) vars.set(m[1], interpolate(m[2] ?? "", vars).value);
  }
  return vars;
}

/**
 * Compose's substitution: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?message},
 * ${VAR?message}. Reports the names it met and the required ones that were unset or empty.
 */
export function interpolate(
  text: string,
  vars: ReadonlyMap<string, string>,
): { value: string; names: string[]; missing: string[] } {
  const names: string[] = [];
  const missing: string[] = [];
  const value = text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g,
    (_, name: string, colon: string | undefined, op: string | undefined, arg: string | undefined) => {
      names.push(name);
      const set = vars.get(name);
      const usable = colon ? set !== undefined && set !== "" : set !== undefined;
      if (usable) return set ?? "";
      if (op === "?") missing.push(name);
      return op === "-" ? (arg ?? "") : "";
    },
  );
  return { value, names, missing };
}

/**
 * .env.example as an operator fills it in: the required passwords and addresses set, everything
 * else as documented. scripts/check-docker.sh hands the same file to `docker compose config`.
 */
export function filledIn(exampleText: string): string {
  return exampleText
    .replace(/^((?:POSTGRES|SHIRI_DB|EXPORTER_DB|GRAFANA_ADMIN)_PASSWORD)=$/gm, "$1=s3cret")
    .replace(/^ALERT_WEBHOOK_URL=$/m, "ALERT_WEBHOOK_URL=https://oncall.example/alertmanager")
    .replace(/^RUNBOOK_BASE_URL=$/m, "RUNBOOK_BASE_URL=https://git.example/shiri/blob/main/docs/runbooks");
}

export function checkCompose(root: string): string[] {
  const problems: string[] = [];
  let doc: { [key: string]: Yaml };
  const composeText = readFileSync(path.join(root, "docker-compose.yml"), "utf8");
  const exampleText = readFileSync(path.join(root, ".env.example"), "utf8");
  const envExample = readEnvFile(exampleText);
  for (const [key, value] of envExample)
    if (/PASSWORD$/.test(key) && value !== "") problems.push(`.env.example: ${key} must be left empty`);
  const resolved = readEnvFile(filledIn(exampleText));
  // Compose substitutes in values only, never in comments.
  const composeValues = composeText.replace(/^\s*#.*$/gm, "");
  const substituted = interpolate(composeValues, resolved);
  for (const name of new Set(substituted.names))
    if (!envExample.has(name))
      problems.push(`docker-compose.yml uses \${${name}}, which .env.example does not document`);
  for (const name of envExample.keys())
    if (!substituted.names.includes(name))
      problems.push(`.env.example documents ${name}, which docker-compose.yml never uses`);
  for (const name of new Set(substituted.missing))
    problems.push(
      `docker-compose.yml requires ${name}, still unset once .env.example's passwords are filled in`,
    );
  const required = new Set(interpolate(composeValues, new Map()).missing);
  for (const name of [
    "POSTGRES_PASSWORD",
    "SHIRI_DB_PASSWORD",
    "EXPORTER_DB_PASSWORD",
    "GRAFANA_ADMIN_PASSWORD",
    "DATABASE_URL",
    "ALERT_WEBHOOK_URL",
    "RUNBOOK_BASE_URL",
  ])
    if (!required.has(name))
      problems.push(`docker-compose.yml must require \${${name}:?…} (no default secret)`);
  try {
    doc = readComposeYaml(substituted.value);
  } catch (err) {
    return [...problems, String(err instanceof Error ? err.message : err)];
  }
  const services = asMap(doc.services);
  const known = serviceVariables(root);
  const shiriServices = Object.entries(services).filter(([, s]) =>
    asStrings(asMap(s).command).join(" ").includes("bin/shiri.mjs start"),
  );
  if (shiriServices.length === 0) problems.push("no service runs `node bin/shiri.mjs start`");

  // The simulator: its SIM_* variables, and the ports it listens on.
  const simulator = Object.entries(services).find(([, s]) =>
    asStrings(asMap(s).command).join(" ").includes("simulator"),
  );
  const simPorts = new Map<string, number>();
  if (!simulator) problems.push("no simulator service (`node bin/shiri.mjs simulator`)");
  else {
    const env = Object.fromEntries(
      Object.entries(asMap(asMap(simulator[1]).environment)).map(([k, v]) => [k, String(v)]),
    );
    for (const [key, value] of Object.entries(env)) {
      if (key === "SIM_HOST" || key === "LOG_LEVEL") continue;
      const op = OPERATORS.find((o) => key.startsWith(`SIM_${o.toUpperCase()}_`));
      try {
        const read = op ? overridesFromEnv(op, { [key]: value }) : null;
        if (
          !read ||
          (Object.keys(read.behaviour ?? {}).length === 0 &&
            read.port === undefined &&
            read.password === undefined)
        )
          problems.push(`${simulator[0]}: ${key} is not a variable the simulator reads`);
      } catch (err) {
        problems.push(
          `${simulator[0]}: ${key}=${value}: ${String(err instanceof Error ? err.message : err)}`,
        );
      }
    }
    if (env.SIM_HOST !== "0.0.0.0")
      problems.push(`${simulator[0]}: SIM_HOST must be 0.0.0.0 to be reachable from the workers`);
    for (const op of OPERATORS)
      simPorts.set(op, Number(env[`SIM_${op.toUpperCase()}_PORT`] ?? CARRIERS[op].smpp.port));
  }

  // Shiri's services: known variables, valid values, SMPP pointing at the simulator, one metrics port.
  const metricsPorts = new Map<string, number>();
  for (const [name, s] of shiriServices) {
    const env = Object.fromEntries(
      Object.entries(asMap(asMap(s).environment)).map(([k, v]) => [k, String(v)]),
    );
    for (const key of Object.keys(env))
      if (!known.has(key)) problems.push(`${name}: ${key} is not a variable src/config.ts reads`);
    let config: ReturnType<typeof loadConfig>;
    try {
      config = loadConfig(env);
    } catch (err) {
      problems.push(
        `${name}: src/config.ts refuses its environment: ${String(err instanceof Error ? err.message : err)}`,
      );
      continue;
    }
    if (!env.DATABASE_URL) problems.push(`${name}: no DATABASE_URL (it would start an embedded Postgres)`);
    else if (!services[new URL(config.DATABASE_URL ?? "").hostname])
      problems.push(`${name}: DATABASE_URL's host is not a compose service`);
    metricsPorts.set(name, config.METRICS_PORT);
    // Ready means serving: /readyz on the API port for the API, on the metrics port otherwise.
    const role = asStrings(asMap(s).command).includes("api") ? "api" : "other";
    const probe = asStrings(asMap(asMap(s).healthcheck).test).join(" ");
    const port = role === "api" ? config.PORT : config.METRICS_PORT;
    if (probe !== `CMD node bin/readyz.mjs ${port}`)
      problems.push(
        `${name}: healthcheck must be ["CMD", "node", "bin/readyz.mjs", "${port}"], is [${probe}]`,
      );
    if (asStrings(asMap(s).command).includes("worker") || !asStrings(asMap(s).command).includes("--role")) {
      if (config.START_SIMULATORS)
        problems.push(`${name}: START_SIMULATORS must be false (the simulator is a service)`);
      for (const op of OPERATORS) {
        const smpp = config.links[op];
        if (!smpp) continue;
        if (simulator && smpp.host !== simulator[0])
          problems.push(
            `${name}: SMPP_${op.toUpperCase()}_HOST is ${smpp.host}, not the ${simulator[0]} service`,
          );
        if (simPorts.size > 0 && smpp.port !== simPorts.get(op))
          problems.push(
            `${name}: SMPP_${op.toUpperCase()}_PORT ${smpp.port} ≠ the simulator's ${simPorts.get(op)}`,
          );
      }
    }
  }

  problems.push(...checkDatabaseRoles(services, shiriServices));

  // Prometheus scrapes each Shiri service by name on the METRICS_PORT it was given.
  const promYml = readFileSync(path.join(root, "grafana", "prometheus", "prometheus.yml"), "utf8");
  const scraped = [...promYml.matchAll(/names:\s*\[\s*([\w-]+)\s*\][\s\S]*?port:\s*(\d+)/g)];
  for (const [name, port] of metricsPorts) {
    const job = scraped.find((m) => m[1] === name);
    if (!job) problems.push(`grafana/prometheus/prometheus.yml does not scrape the ${name} service`);
    else if (Number(job[2]) !== port)
      problems.push(
        `grafana/prometheus/prometheus.yml scrapes ${name} on ${job[2]}, its METRICS_PORT is ${port}`,
      );
  }
  for (const m of scraped)
    if (m[1] && !services[m[1]])
      problems.push(`grafana/prometheus/prometheus.yml scrapes ${m[1]}, not a compose service`);

  // Every service comes back by itself; Grafana admits no anonymous viewer.
  for (const [name, s] of Object.entries(services))
    if (!["always", "unless-stopped", "on-failure"].some((p) => String(asMap(s).restart).startsWith(p)))
      problems.push(`${name}: no restart policy`);
  const grafana = Object.entries(services).find(([, s]) => String(asMap(s).image).startsWith("grafana/"));
  if (grafana && asMap(asMap(grafana[1]).environment).GF_AUTH_ANONYMOUS_ENABLED !== "false")
    problems.push(`${grafana[0]}: GF_AUTH_ANONYMOUS_ENABLED must be "false"`);

  // Static scrape targets and the Alertmanager Prometheus sends to are compose services.
  for (const m of promYml.matchAll(/targets:\s*\[\s*([\w-]+):\d+\s*\]/g))
    if (m[1] && m[1] !== "localhost" && !services[m[1]])
      problems.push(`grafana/prometheus/prometheus.yml targets ${m[1]}, not a compose service`);

  // Grafana's datasource is the Prometheus service; the mounted folders exist.
  const ds = readFileSync(
    path.join(root, "grafana", "provisioning", "datasources", "prometheus.yml"),
    "utf8",
  );
  const host = ds.match(/url:\s*https?:\/\/([\w-]+)/)?.[1];
  if (!host || !services[host])
    problems.push(`the Grafana datasource url names ${host ?? "nothing"}, not a compose service`);
  for (const [name, s] of Object.entries(services))
    for (const volume of asStrings(asMap(s).volumes)) {
      const source = volume.split(":")[0] ?? "";
      if (source.startsWith(".") && !existsSync(path.join(root, source)))
        problems.push(`${name}: mounts ${source}, which does not exist`);
    }
  return problems;
}

/**
 * The database roles (issue 28): Shiri connects as a role of its own, not the bundled Postgres's
 * superuser, which scripts/postgres-init makes on the first start; postgres_exporter as another.
 */
function checkDatabaseRoles(
  services: { [key: string]: Yaml },
  shiriServices: Array<[string, Yaml]>,
): string[] {
  const problems: string[] = [];
  const postgres = Object.entries(services).find(([, s]) => String(asMap(s).image).startsWith("postgres:"));
  if (!postgres) return problems;
  const pgEnv = asMap(asMap(postgres[1]).environment);
  const superuser = String(pgEnv.POSTGRES_USER ?? "postgres");
  const userOf = (url: unknown) => {
    try {
      return decodeURIComponent(new URL(String(url)).username);
    } catch {
      return "";
    }
  };
  const appUsers = new Set(shiriServices.map(([, s]) => userOf(asMap(asMap(s).environment).DATABASE_URL)));
  for (const user of appUsers)
    if (user === superuser)
      problems.push(`DATABASE_URL connects as ${user}, the postgres service's superuser (POSTGRES_USER)`);
  const exporter = Object.entries(services).find(([, s]) =>
    String(asMap(s).image).includes("postgres-exporter"),
  );
  const exporterUser = exporter ? userOf(asMap(asMap(exporter[1]).environment).DATA_SOURCE_NAME) : "";
  if (exporter && (exporterUser === superuser || appUsers.has(exporterUser)))
    problems.push(`${exporter[0]}: connects as ${exporterUser}; it needs a read-only role of its own`);
  if (
    !asStrings(asMap(postgres[1]).volumes).some((v) =>
      v.startsWith("./scripts/postgres-init:/docker-entrypoint-initdb.d"),
    )
  )
    problems.push(
      `${postgres[0]}: scripts/postgres-init is not mounted at /docker-entrypoint-initdb.d (the roles)`,
    );
  return problems;
}
