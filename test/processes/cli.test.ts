import { createHash, randomBytes, randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.ts";
import {
  CLI_TEST_TIMEOUT_MS,
  type CliResult,
  failedWith,
  inParallel,
  oneJsonObject,
  PARALLEL_RUNS,
  shiri,
  usageError,
} from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { databaseUrl } from "../support/global-setup.ts";

/**
 * The `shiri` admin CLI, run for real (`node bin/shiri.mjs`) against a database of this file's
 * own: creating accounts, keys, sender ids and top-ups, migrating, and refusing bad arguments.
 * The read, revoke and sender-id lifecycle commands, help and tables: cli-admin.test.ts.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TOKEN = /^shr_[A-Za-z0-9_-]{43}$/;
/** The numbered migrations shipped in src/db/migrations, in the order they apply. */
const MIGRATIONS = readdirSync(new URL("../../src/db/migrations/", import.meta.url))
  .filter((f) => /^\d{3}_.+\.sql$/.test(f))
  .sort();
const LATEST = MIGRATIONS.at(-1);

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

let db: TestDatabase;
let pool: Pool;
const run = (...args: string[]) => shiri(db.url, args);

async function createAccount(balance = "25.50"): Promise<{ id: string; key: string; keyId: string }> {
  const out = oneJsonObject(await run("account", "create", "--name", "CLI test", "--balance", balance));
  return { id: String(out.account_id), key: String(out.api_key), keyId: String(out.api_key_id) };
}

async function counts(): Promise<Record<string, number>> {
  const { rows } = await pool.query<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM accounts) AS accounts,
            (SELECT count(*)::int FROM api_keys) AS api_keys,
            (SELECT count(*)::int FROM sender_ids) AS sender_ids,
            (SELECT count(*)::int FROM ledger_entries) AS ledger_entries,
            (SELECT COALESCE(sum(balance), 0)::bigint FROM account_balances) AS balances`,
  );
  return rows[0] as Record<string, number>;
}

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, 2);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe("shiri account create", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("prints exactly one JSON object with account_id, api_key and api_key_id; only the key's hash is stored", async () => {
    const res = await run("account", "create", "--name", "Acme Ltd", "--balance", "25.50");
    const out = oneJsonObject(res);
    expect(Object.keys(out).sort()).toEqual(["account_id", "api_key", "api_key_id"]);
    expect(out.account_id).toMatch(UUID);
    expect(out.api_key_id).toMatch(UUID);
    expect(out.api_key).toMatch(TOKEN);
    const key = String(out.api_key);

    const { rows } = await pool.query<{ id: string; account_id: string; active: boolean }>(
      "SELECT id, account_id, active FROM api_keys WHERE token_hash = $1",
      [sha256(key)],
    );
    expect(rows).toEqual([{ id: out.api_key_id, account_id: out.account_id, active: true }]);
    const plain = await pool.query("SELECT 1 FROM api_keys WHERE token_hash = $1 OR name = $1", [key]);
    expect(plain.rowCount).toBe(0);

    const account = await pool.query(
      "SELECT name, currency, balance FROM accounts JOIN account_balances ON account_id = id WHERE id = $1",
      [out.account_id],
    );
    expect(account.rows).toEqual([{ name: "Acme Ltd", currency: "USD", balance: 255_000 }]);
    const ledger = await pool.query("SELECT kind, amount FROM ledger_entries WHERE account_id = $1", [
      out.account_id,
    ]);
    expect(ledger.rows).toEqual([{ kind: "top_up", amount: 255_000 }]);

    const shown = oneJsonObject(await run("balance", "show", "--account", String(out.account_id)));
    expect(shown).toMatchObject({ account_id: out.account_id, currency: "USD", available: 255_000, held: 0 });
  });

  it("accepts a zero opening balance and writes no ledger row for it", async () => {
    const { id } = await createAccount("0");
    const shown = oneJsonObject(await run("balance", "show", "--account", id));
    expect(shown).toMatchObject({ available: 0, held: 0 });
    const ledger = await pool.query("SELECT 1 FROM ledger_entries WHERE account_id = $1", [id]);
    expect(ledger.rowCount).toBe(0);
  });
});

describe("shiri sender-id add", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("adds pending unless --approved (--pending still accepted), refuses a fourth with exit 1 and one line", async () => {
    const { id } = await createAccount();
    const [plain, approved, pending] = await Promise.all([
      run("sender-id", "add", "--account", id, "SHIRI"),
      run("sender-id", "add", "--account", id, "--approved", "APPR1"),
      run("sender-id", "add", "--account", id, "--pending", "PEND1"),
    ]);
    expect(oneJsonObject(plain as CliResult)).toEqual({
      account_id: id,
      address: "SHIRI",
      verification_status: "pending",
      added: true,
    });
    expect(oneJsonObject(approved as CliResult)).toEqual({
      account_id: id,
      address: "APPR1",
      verification_status: "verified",
      added: true,
    });
    expect(oneJsonObject(pending as CliResult)).toEqual({
      account_id: id,
      address: "PEND1",
      verification_status: "pending",
      added: true,
    });

    const fourth = await run("sender-id", "add", "--account", id, "--approved", "FOURTH");
    failedWith(fourth, /at most 3 sender ids; remove one first/);

    const { rows } = await pool.query(
      "SELECT address, verification_status FROM sender_ids WHERE account_id = $1 ORDER BY address",
      [id],
    );
    expect(rows).toEqual([
      { address: "APPR1", verification_status: "verified" },
      { address: "PEND1", verification_status: "pending" },
      { address: "SHIRI", verification_status: "pending" },
    ]);
  });

  it("re-adding a sender id the account has never changes its status: added false, or exit 1 when a flag disagrees", async () => {
    const { id } = await createAccount();
    oneJsonObject(await run("sender-id", "add", "--account", id, "AGAIN"));
    oneJsonObject(await run("sender-id", "add", "--account", id, "--approved", "OKAYED"));
    const [again, againPending, approveByAdd, pendByAdd, againApproved] = await Promise.all([
      run("sender-id", "add", "--account", id, "AGAIN"),
      run("sender-id", "add", "--account", id, "--pending", "AGAIN"),
      run("sender-id", "add", "--account", id, "--approved", "AGAIN"),
      run("sender-id", "add", "--account", id, "--pending", "OKAYED"),
      run("sender-id", "add", "--account", id, "OKAYED"),
    ]);
    expect(oneJsonObject(again as CliResult)).toEqual({
      account_id: id,
      address: "AGAIN",
      verification_status: "pending",
      added: false,
    });
    expect(oneJsonObject(againPending as CliResult)).toMatchObject({
      verification_status: "pending",
      added: false,
    });
    failedWith(approveByAdd as CliResult, /AGAIN is already on account .* as pending; add leaves it so/);
    expect((approveByAdd as CliResult).stderr).toMatch(/shiri sender-id approve\|reject\|remove/);
    failedWith(pendByAdd as CliResult, /OKAYED is already on account .* as verified; add leaves it so/);
    // The one the old CLI silently approved: a plain re-add of a verified sender keeps it verified.
    expect(oneJsonObject(againApproved as CliResult)).toMatchObject({
      verification_status: "verified",
      added: false,
    });

    const { rows } = await pool.query(
      "SELECT address, verification_status FROM sender_ids WHERE account_id = $1 ORDER BY address",
      [id],
    );
    expect(rows).toEqual([
      { address: "AGAIN", verification_status: "pending" },
      { address: "OKAYED", verification_status: "verified" },
    ]);
  });

  it("lets exactly three of four concurrent adds through", async () => {
    const { id } = await createAccount();
    const results = await Promise.all(
      ["RACEA", "RACEB", "RACEC", "RACED"].map((s) => run("sender-id", "add", "--account", id, s)),
    );
    expect(results.map((r) => r.code).sort()).toEqual([0, 0, 0, 1]);
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM sender_ids WHERE account_id = $1", [
      id,
    ]);
    expect(rows[0]).toEqual({ n: 3 });
  });
});

describe("shiri balance and api-key create", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("balance top-up --amount 10 adds 100000 and balance show reflects it", async () => {
    const { id } = await createAccount("25.50");
    const topped = oneJsonObject(await run("balance", "top-up", "--account", id, "--amount", "10"));
    expect(topped).toMatchObject({ account_id: id, available: 355_000, topped_up: 100_000 });
    const shown = oneJsonObject(await run("balance", "show", "--account", id));
    expect(shown).toEqual({
      account_id: id,
      currency: "USD",
      available: 355_000,
      held: 0,
      available_display: "35.5000",
    });
    const ledger = await pool.query(
      "SELECT kind, amount FROM ledger_entries WHERE account_id = $1 ORDER BY id",
      [id],
    );
    expect(ledger.rows).toEqual([
      { kind: "top_up", amount: 255_000 },
      { kind: "top_up", amount: 100_000 },
    ]);
  });

  it("api-key create prints a new key for the account, stored by hash under its name", async () => {
    const { id, key: firstKey } = await createAccount();
    const out = oneJsonObject(await run("api-key", "create", "--account", id, "--name", "billing-service"));
    expect(out).toMatchObject({ account_id: id, name: "billing-service" });
    expect(out.api_key).toMatch(TOKEN);
    expect(out.api_key).not.toBe(firstKey);
    expect(out.api_key_id).toMatch(UUID);
    const { rows } = await pool.query(
      "SELECT id, account_id, name, active FROM api_keys WHERE token_hash = $1",
      [sha256(String(out.api_key))],
    );
    expect(rows).toEqual([{ id: out.api_key_id, account_id: id, name: "billing-service", active: true }]);
  });
});

describe("shiri migrate", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const admin = () => inject("adminDatabaseUrl");
  const empties: string[] = [];

  async function emptyDatabase(): Promise<string> {
    const name = `shiri_cli_${randomBytes(6).toString("hex")}`;
    const client = new pg.Client({ connectionString: admin() });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    await client.end();
    empties.push(name);
    return databaseUrl(admin(), name);
  }

  afterAll(async () => {
    const client = new pg.Client({ connectionString: admin() });
    await client.connect();
    for (const name of empties) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  });

  async function appliedVersions(url: string): Promise<string[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: string }>(
        "SELECT version FROM schema_migrations ORDER BY version",
      );
      return rows.map((r) => r.version);
    } finally {
      await client.end();
    }
  }

  it("migrates an empty database exactly once, even when two runs race", async () => {
    const url = await emptyDatabase();
    const [a, b] = await Promise.all([shiri(url, ["migrate"]), shiri(url, ["migrate"])]);
    for (const res of [a, b] as CliResult[]) {
      const out = oneJsonObject(res);
      expect(Object.keys(out).sort()).toEqual(["applied", "current", "unknown"]);
      expect(out.current).toBe(LATEST);
    }
    expect(await appliedVersions(url)).toEqual(MIGRATIONS);

    const again = oneJsonObject(await shiri(url, ["migrate"]));
    expect(again).toEqual({ applied: [], current: LATEST, unknown: [] });
    expect(await appliedVersions(url)).toEqual(MIGRATIONS);
  });

  it("`shiri migrate` on an empty database reports the migrations it applied", async () => {
    const url = await emptyDatabase();
    const out = oneJsonObject(await shiri(url, ["migrate"]));
    expect(out).toEqual({ applied: MIGRATIONS, current: LATEST, unknown: [] });
  });

  it("`shiri migrate` on a database a newer version migrated reports its latest migration, and says so", async () => {
    const url = await emptyDatabase();
    oneJsonObject(await shiri(url, ["migrate"]));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query("INSERT INTO schema_migrations (version) VALUES ('999_future.sql')");
    await client.end();
    const res = await shiri(url, ["migrate"], { env: { LOG_LEVEL: "warn" } });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      applied: [],
      current: "999_future.sql",
      unknown: ["999_future.sql"],
    });
    // And the one warning on stderr, where the CLI logs.
    expect(
      res.stderr
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toEqual([
      expect.objectContaining({
        level: 40,
        unknown: ["999_future.sql"],
        msg: expect.stringMatching(/^the database was migrated by a newer version of Shiri/),
      }),
    ]);
  });

  it("an admin command on an empty database migrates it first", async () => {
    const url = await emptyDatabase();
    const out = oneJsonObject(await shiri(url, ["account", "create", "--name", "Fresh", "--balance", "1"]));
    expect(out.account_id).toMatch(UUID);
    expect(await appliedVersions(url)).toEqual(MIGRATIONS);
  });
});

describe("shiri: bad arguments", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("exit 2 with a message and the command's usage on stderr, nothing on stdout, writing nothing", async () => {
    const { id } = await createAccount();
    const before = await counts();
    const cases: Array<{ args: string[]; stderr: RegExp; usage: string }> = [
      { args: ["frobnicate"], stderr: /unknown command "frobnicate"/, usage: "<command>" },
      {
        args: ["account"],
        stderr: /"account" needs a command after it/,
        usage: "account <create|list|show|send-defaults>",
      },
      {
        args: ["account", "delete", "--account", id],
        stderr: /unknown command "account delete"/,
        usage: "account <create|list|show|send-defaults>",
      },
      {
        args: ["account", "create", "--balance", "1"],
        stderr: /--name is required/,
        usage: "account create",
      },
      {
        args: ["account", "create", "--name", "X"],
        stderr: /--balance is required/,
        usage: "account create",
      },
      {
        args: ["account", "create", "--name", "X", "--balance", "abc"],
        stderr: /--balance must be/,
        usage: "account create",
      },
      {
        args: ["account", "create", "--name", "X", "--balance", "1", "--currency", "XYZ"],
        stderr: /XYZ is not priced/,
        usage: "account create",
      },
      {
        args: ["account", "create", "--name", "X".repeat(201), "--balance", "1"],
        stderr: /--name must be at most/,
        usage: "account create",
      },
      { args: ["sender-id", "add", "SHIRI"], stderr: /--account is required/, usage: "sender-id add" },
      { args: ["balance", "show"], stderr: /--account is required/, usage: "balance show" },
      {
        args: ["balance", "top-up", "--amount", "10"],
        stderr: /--account is required/,
        usage: "balance top-up",
      },
      {
        args: ["api-key", "create", "--name", "svc"],
        stderr: /--account is required/,
        usage: "api-key create",
      },
      {
        args: ["balance", "show", "--account", "not-a-uuid"],
        stderr: /--account must be an account id \(a UUID\)/,
        usage: "balance show",
      },
      {
        args: ["balance", "show", "--account", "' OR 1=1 --"],
        stderr: /--account must be an account id/,
        usage: "balance show",
      },
      {
        args: ["balance", "show", "--account", `${id}x`],
        stderr: /--account must be an account id/,
        usage: "balance show",
      },
      // "-5" on its own is the option's value, judged in the CLI's words (not parseArgs's "ambiguous").
      {
        args: ["balance", "top-up", "--account", id, "--amount", "-5"],
        stderr: /shiri: --amount must be a positive decimal amount like 25 or 12\.50, at most .*, got "-5"\n/,
        usage: "balance top-up",
      },
      {
        args: ["account", "create", "--name", "X", "--balance", "-5"],
        stderr: /shiri: --balance must be a decimal amount like 25 or 12\.50, at most .*, got "-5"\n/,
        usage: "account create",
      },
      ...["-5", "abc", "1.23456", "0", "1e3"].map((amount) => ({
        args: ["balance", "top-up", "--account", id, `--amount=${amount}`],
        stderr: /--amount must be a positive/,
        usage: "balance top-up",
      })),
      {
        args: ["balance", "top-up", "--account", id, "--amount", ""],
        stderr: /--amount is required/,
        usage: "balance top-up",
      },
      {
        args: ["balance", "top-up", "--account", id],
        stderr: /--amount is required/,
        usage: "balance top-up",
      },
      { args: ["api-key", "create", "--account", id], stderr: /--name is required/, usage: "api-key create" },
      {
        args: ["sender-id", "add", "--account", id, "AB"],
        stderr: /3 to 11 letters or digits, got "AB"/,
        usage: "sender-id add",
      },
      {
        args: ["sender-id", "add", "--account", id, "TOO-LONG-SENDER"],
        stderr: /3 to 11 letters or digits/,
        usage: "sender-id add",
      },
      {
        args: ["sender-id", "add", "--account", id, "SH IRI"],
        stderr: /3 to 11 letters or digits/,
        usage: "sender-id add",
      },
      { args: ["sender-id", "add", "--account", id], stderr: /SENDER is required/, usage: "sender-id add" },
      {
        args: ["sender-id", "add", "--account", id, "ONE", "TWO"],
        stderr: /unexpected argument "TWO"/,
        usage: "sender-id add",
      },
      {
        args: ["sender-id", "add", "--account", id, "--approved", "--pending", "BOTH"],
        stderr: /--approved and --pending cannot both be given/,
        usage: "sender-id add",
      },
      {
        args: ["balance", "show", "--account", id, "--verbose"],
        stderr: /Unknown option '--verbose'/,
        usage: "balance show",
      },
      { args: ["migrate", "extra"], stderr: /unexpected argument "extra"/, usage: "migrate" },
      {
        args: ["start", "--role", "boss"],
        stderr: /--role must be one of api, worker, all, got "boss"/,
        usage: "start",
      },
      {
        args: ["audit", "--stuck-minutes", "0"],
        stderr: /--stuck-minutes must be a positive number/,
        usage: "audit",
      },
    ];
    const results = await inParallel(cases, PARALLEL_RUNS, (c) => run(...c.args));
    cases.forEach((c, i) => {
      usageError(results[i] as CliResult, c.stderr, c.usage, `shiri ${c.args.join(" ")}`);
    });
    expect(await counts()).toEqual(before);
  });

  it("an unknown account is a failure, not a usage error: exit 1 and one line, writing nothing", async () => {
    const unknown = randomUUID();
    const before = await counts();
    const cases = [
      ["balance", "show", "--account", unknown],
      ["balance", "top-up", "--account", unknown, "--amount", "5"],
      ["sender-id", "add", "--account", unknown, "SHIRI"],
      ["api-key", "create", "--account", unknown, "--name", "svc"],
    ];
    const results = await inParallel(cases, PARALLEL_RUNS, (args) => run(...args));
    cases.forEach((args, i) => {
      failedWith(results[i] as CliResult, new RegExp(`^shiri: no account ${unknown}\n$`), args.join(" "));
    });
    expect(await counts()).toEqual(before);
  });
});

describe("shiri start: a port another process holds", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("names the setting that chose the port (PORT or METRICS_PORT), exit 1, one line", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const held = (holder.address() as AddressInfo).port;
    try {
      const cases = [
        { env: { PORT: String(held), METRICS_PORT: "0" }, setting: "PORT" },
        { env: { PORT: "0", METRICS_PORT: String(held) }, setting: "METRICS_PORT" },
      ];
      const results = await inParallel(cases, PARALLEL_RUNS, (c) =>
        shiri(db.url, ["start", "--role", "api"], {
          env: { HOST: "127.0.0.1", SHIRI_ENV: "test", ...c.env },
        }),
      );
      cases.forEach((c, i) => {
        const res = results[i] as CliResult;
        expect(res.code, res.stderr).toBe(1);
        expect(res.stderr).toBe(
          `shiri: ${c.setting}=${held}: 127.0.0.1:${held} is already in use by another process (EADDRINUSE): stop it or set ${c.setting} to a free port\n`,
        );
      });
    } finally {
      holder.close();
    }
  });
});

describe("shiri start: a carrier simulator's port another process holds", {
  timeout: CLI_TEST_TIMEOUT_MS,
}, () => {
  it("names the link's port setting the simulator follows, exit 1, one line", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const held = (holder.address() as AddressInfo).port;
    try {
      // The simulators are a development install's: this checkout's sources, whatever is under test.
      const res = await shiri(db.url, ["start", "--role", "all"], {
        sources: true,
        env: {
          HOST: "127.0.0.1",
          PORT: "0",
          METRICS_PORT: "0",
          SHIRI_ENV: "test",
          START_SIMULATORS: "true",
          SMPP_NETONE_PORT: String(held),
        },
      });
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toBe(
        `shiri: SMPP_NETONE_PORT=${held}: 127.0.0.1:${held} is already in use by another process (EADDRINUSE): stop it or set SMPP_NETONE_PORT to a free port\n`,
      );
    } finally {
      holder.close();
    }
  });
});

describe("a DATABASE_URL nobody answers at", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("names DATABASE_URL and its address, without its credentials: exit 1, one line", async () => {
    const nobody = createServer();
    await new Promise<void>((resolve) => nobody.listen(0, "127.0.0.1", resolve));
    const port = (nobody.address() as AddressInfo).port;
    await new Promise((resolve) => nobody.close(resolve));
    const url = `postgres://shiri:Hunter2pw@127.0.0.1:${port}/shiri`;
    const results = await inParallel(
      [
        ["account", "list"],
        ["start", "--role", "api"],
      ],
      PARALLEL_RUNS,
      (args) =>
        shiri(url, args, { env: { HOST: "127.0.0.1", PORT: "0", METRICS_PORT: "0", SHIRI_ENV: "test" } }),
    );
    for (const res of results) {
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toMatch(
        new RegExp(
          `^shiri: DATABASE_URL \\(127\\.0\\.0\\.1:${port}/shiri\\) cannot be reached: [^\\n]*ECONNREFUSED[^\\n]*\\n$`,
        ),
      );
      expect(res.stderr).not.toContain("Hunter2pw");
    }
  });
});
