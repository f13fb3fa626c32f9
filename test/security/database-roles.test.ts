import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migrate } from "../../src/db/migrate.ts";
import { createPool } from "../../src/db/pool.ts";
import { createLogger } from "../../src/logger.ts";
import { startQueue } from "../../src/queue/boss.ts";

/**
 * Issue 28, item 6: in compose, Shiri's database role owns its schema but is not a superuser, and
 * the exporter has a read-only role of its own. The very script compose mounts
 * (scripts/postgres-init/roles.psql) is run here through psql, with roles and a database of this
 * test's own, and each role is then tried for what it must and must not do.
 */
const ROLES = fileURLToPath(new URL("../../scripts/postgres-init/roles.psql", import.meta.url));
const INIT_SHELL = fileURLToPath(new URL("../../scripts/postgres-init/10-roles.sh", import.meta.url));
const hasPsql = spawnSync("psql", ["--version"]).status === 0;

const suffix = randomBytes(4).toString("hex");
const names = { app: `shiri_app_${suffix}`, exporter: `shiri_exp_${suffix}`, stranger: `stranger_${suffix}` };
const database = `shiri_roles_${suffix}`;
const admin = () => inject("adminDatabaseUrl");
/** Each role's password: the test server may trust loopback (this machine's) or ask (the embedded one). */
const PASSWORDS: Record<string, string> = {
  [names.app]: "app-secret",
  [names.exporter]: "exporter-secret",
  [names.stranger]: "stranger-secret",
};
/** The test server, as one role, on the roles' database. */
const urlAs = (role: string) => {
  const u = new URL(admin());
  u.username = role;
  u.password = PASSWORDS[role] ?? "";
  u.pathname = `/${database}`;
  return u.toString();
};

async function asAdmin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: admin() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

let app: pg.Pool;
let exporter: pg.Pool;

describe.skipIf(!hasPsql)("the compose stack's database roles (scripts/postgres-init)", () => {
  beforeAll(async () => {
    const run = spawnSync(
      "psql",
      [
        admin(),
        "-X",
        "-q",
        ...["-v", `app_role=${names.app}`, "-v", `app_database=${database}`, "-v", "app_password=app-secret"],
        ...["-v", `exporter_role=${names.exporter}`, "-v", "exporter_password=exporter-secret"],
        "-f",
        ROLES,
      ],
      { encoding: "utf8" },
    );
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    app = createPool(urlAs(names.app), 4);
    exporter = createPool(urlAs(names.exporter), 1);
  });

  afterAll(async () => {
    await app?.end();
    await exporter?.end();
    await asAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    for (const role of Object.values(names)) await asAdmin(`DROP ROLE IF EXISTS ${role}`);
  });

  it("makes Shiri's role no superuser, unable to make roles or databases", async () => {
    const { rows } = await app.query(
      `SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls
         FROM pg_roles WHERE rolname = current_user`,
    );
    expect(rows).toEqual([
      {
        rolsuper: false,
        rolcreaterole: false,
        rolcreatedb: false,
        rolreplication: false,
        rolbypassrls: false,
      },
    ]);
  });

  it("lets Shiri's role migrate its schema (concurrent builds included) and start its queue", async () => {
    const result = await migrate(app);
    expect(result.applied.length).toBeGreaterThan(20);
    const boss = await startQueue(urlAs(names.app), createLogger("silent"), { max: 2 });
    await boss.stop({ graceful: false });
    const { rows } = await app.query<{ owner: string; n: number }>(
      `SELECT pg_get_userbyid(relowner) AS owner, count(*)::int AS n FROM pg_class
        WHERE relnamespace IN ('public'::regnamespace, 'pgboss'::regnamespace) GROUP BY 1`,
    );
    expect(rows).toEqual([{ owner: names.app, n: expect.any(Number) }]);
  });

  it.each([
    ["make a role", `CREATE ROLE x_${suffix}`, /permission denied/],
    [
      "change the server's settings",
      "ALTER SYSTEM SET work_mem = '8MB'",
      /permission denied|must be superuser/,
    ],
    [
      "run a program on the server",
      "COPY (SELECT 1) TO PROGRAM 'true'",
      /permission denied|must be superuser/,
    ],
    ["read the server's files", "SELECT pg_read_file('postgresql.conf')", /permission denied/],
    ["read password hashes", "SELECT rolpassword FROM pg_authid", /permission denied/],
  ])("refuses Shiri's role to %s", async (_what, sql, error) => {
    await expect(app.query(sql)).rejects.toThrow(error);
  });

  it("gives the exporter the statistics its queries read, and no row of Shiri's", async () => {
    // grafana/postgres-exporter/queries.yml's query, as the exporter runs it.
    const { rows } = await exporter.query<{ schema: string; table: string; size_bytes: string }>(
      `SELECT schemaname AS schema, relname AS table, pg_total_relation_size(relid) AS size_bytes
         FROM pg_stat_user_tables WHERE schemaname IN ('public', 'pgboss')`,
    );
    expect(rows.map((r) => `${r.schema}.${r.table}`)).toEqual(
      expect.arrayContaining(["public.messages", "public.ledger_entries", "pgboss.job"]),
    );
    // pg_monitor: other roles' statements are visible, not "<insufficient privilege>".
    const session = await app.connect();
    try {
      await session.query("SELECT 'seen by the exporter' AS statement");
      const activity = await exporter.query<{ query: string }>(
        "SELECT query FROM pg_stat_activity WHERE usename = $1 AND query LIKE '%seen by the exporter%'",
        [names.app],
      );
      expect(activity.rows).toEqual([{ query: "SELECT 'seen by the exporter' AS statement" }]);
    } finally {
      session.release();
    }
    await expect(exporter.query("SELECT count(*) FROM messages")).rejects.toThrow(/permission denied/);
    await expect(exporter.query("CREATE TABLE exporter_was_here ()")).rejects.toThrow(
      /read-only transaction|permission denied/,
    );
  });

  it("lets no other role connect to Shiri's database", async () => {
    await asAdmin(`CREATE ROLE ${names.stranger} LOGIN PASSWORD '${PASSWORDS[names.stranger]}'`);
    const stranger = new pg.Client({ connectionString: urlAs(names.stranger) });
    await expect(stranger.connect()).rejects.toThrow(/permission denied for database/);
  });

  it("has an init script compose runs that is valid shell and passes every variable roles.psql reads", () => {
    expect(spawnSync("sh", ["-n", INIT_SHELL]).status).toBe(0);
    const shell = readFileSync(INIT_SHELL, "utf8");
    for (const variable of ["app_role", "app_database", "app_password", "exporter_role", "exporter_password"])
      expect(shell).toContain(`-v ${variable}=`);
  });
});
