import { execFile } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { databaseUrl } from "../support/global-setup.ts";

/**
 * The `shiri` admin CLI, run for real (`node bin/shiri.mjs`) against a database of this file's
 * own. Each run costs a node + tsx start-up, so independent runs go in parallel, a few at a time.
 */
const BIN = fileURLToPath(new URL("../../bin/shiri.mjs", import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TOKEN = /^shr_[A-Za-z0-9_-]{43}$/;
const CLI_TIMEOUT_MS = 30_000;
/** The numbered migrations shipped in src/db/migrations, in the order they apply. */
const MIGRATIONS = readdirSync(new URL("../../src/db/migrations/", import.meta.url))
  .filter((f) => /^\d{3}_.+\.sql$/.test(f))
  .sort();
const LATEST = MIGRATIONS.at(-1);
const PARALLEL_RUNS = 4;

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function shiri(url: string, args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        timeout: CLI_TIMEOUT_MS,
        killSignal: "SIGKILL",
        env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: "silent", NO_COLOR: "1" },
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number") {
          // Not an exit status: the CLI could not be run, or it hung past the timeout.
          reject(new Error(`shiri ${args.join(" ")} failed to run: ${err.message}\n${stderr}`));
          return;
        }
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
  });
}

/** Runs tasks with at most `limit` in flight; results in input order. */
async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** A successful run prints exactly one JSON object on one line, and exits 0. */
function oneJsonObject(res: CliResult): Record<string, unknown> {
  expect(res.code, res.stderr).toBe(0);
  const lines = res.stdout.split("\n");
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe("");
  const parsed: unknown = JSON.parse(lines[0] as string);
  expect(parsed).toBeTypeOf("object");
  expect(Array.isArray(parsed)).toBe(false);
  expect(parsed).not.toBeNull();
  return parsed as Record<string, unknown>;
}

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

describe("shiri account create", () => {
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

describe("shiri sender-id add", () => {
  it("adds verified and --pending sender ids, refuses a fourth with exit 2 and a clear message", async () => {
    const { id } = await createAccount();
    const [verified, pending] = await Promise.all([
      run("sender-id", "add", "--account", id, "SHIRI"),
      run("sender-id", "add", "--account", id, "--pending", "PEND1"),
    ]);
    expect(oneJsonObject(verified as CliResult)).toEqual({
      account_id: id,
      address: "SHIRI",
      verification_status: "verified",
    });
    expect(oneJsonObject(pending as CliResult)).toEqual({
      account_id: id,
      address: "PEND1",
      verification_status: "pending",
    });
    oneJsonObject(await run("sender-id", "add", "--account", id, "Third3"));

    const fourth = await run("sender-id", "add", "--account", id, "FOURTH");
    expect(fourth.code).toBe(2);
    expect(fourth.stdout).toBe("");
    expect(fourth.stderr).toMatch(/at most 3 sender ids/);

    const { rows } = await pool.query(
      "SELECT address, verification_status FROM sender_ids WHERE account_id = $1 ORDER BY address",
      [id],
    );
    expect(rows).toEqual([
      { address: "PEND1", verification_status: "pending" },
      { address: "SHIRI", verification_status: "verified" },
      { address: "Third3", verification_status: "verified" },
    ]);

    // At the limit, approving one the account already has is not a fourth sender id.
    const approve = oneJsonObject(await run("sender-id", "add", "--account", id, "PEND1"));
    expect(approve).toMatchObject({ address: "PEND1", verification_status: "verified" });
    const after = await pool.query("SELECT count(*)::int AS n FROM sender_ids WHERE account_id = $1", [id]);
    expect(after.rows[0]).toEqual({ n: 3 });
  });

  it("lets exactly three of four concurrent adds through", async () => {
    const { id } = await createAccount();
    const results = await Promise.all(
      ["RACEA", "RACEB", "RACEC", "RACED"].map((s) => run("sender-id", "add", "--account", id, s)),
    );
    expect(results.map((r) => r.code).sort()).toEqual([0, 0, 0, 2]);
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM sender_ids WHERE account_id = $1", [
      id,
    ]);
    expect(rows[0]).toEqual({ n: 3 });
  });
});

describe("shiri balance and api-key create", () => {
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

describe("shiri migrate", () => {
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
      expect(Object.keys(out).sort()).toEqual(["applied", "current"]);
      expect(out.current).toBe(LATEST);
    }
    expect(await appliedVersions(url)).toEqual(MIGRATIONS);

    const again = oneJsonObject(await shiri(url, ["migrate"]));
    expect(again).toEqual({ applied: [], current: LATEST });
    expect(await appliedVersions(url)).toEqual(MIGRATIONS);
  });

  it("`shiri migrate` on an empty database reports the migrations it applied", async () => {
    const url = await emptyDatabase();
    const out = oneJsonObject(await shiri(url, ["migrate"]));
    expect(out).toEqual({ applied: MIGRATIONS, current: LATEST });
  });

  it("an admin command on an empty database migrates it first", async () => {
    const url = await emptyDatabase();
    const out = oneJsonObject(await shiri(url, ["account", "create", "--name", "Fresh", "--balance", "1"]));
    expect(out.account_id).toMatch(UUID);
    expect(await appliedVersions(url)).toEqual(MIGRATIONS);
  });
});

describe("shiri: bad arguments", () => {
  it("exit 2 with a message on stderr and nothing on stdout, writing nothing", async () => {
    const { id } = await createAccount();
    const unknown = randomUUID();
    const before = await counts();
    const cases: Array<{ args: string[]; stderr: RegExp }> = [
      { args: ["frobnicate"], stderr: /unknown command "frobnicate"/ },
      { args: ["account"], stderr: /unknown command "account"/ },
      { args: ["account", "delete", "--account", id], stderr: /unknown command "account delete"/ },
      { args: ["account", "create", "--balance", "1"], stderr: /--name is required/ },
      { args: ["account", "create", "--name", "X"], stderr: /--balance is required/ },
      { args: ["account", "create", "--name", "X", "--balance", "abc"], stderr: /--balance must be/ },
      {
        args: ["account", "create", "--name", "X", "--balance", "1", "--currency", "XYZ"],
        stderr: /XYZ is not priced/,
      },
      {
        args: ["account", "create", "--name", "X".repeat(201), "--balance", "1"],
        stderr: /--name must be at most/,
      },
      { args: ["sender-id", "add", "SHIRI"], stderr: /--account is required/ },
      { args: ["balance", "show"], stderr: /--account is required/ },
      { args: ["balance", "top-up", "--amount", "10"], stderr: /--account is required/ },
      { args: ["api-key", "create", "--name", "svc"], stderr: /--account is required/ },
      {
        args: ["balance", "show", "--account", "not-a-uuid"],
        stderr: /--account must be an account id \(a UUID\)/,
      },
      { args: ["balance", "show", "--account", "' OR 1=1 --"], stderr: /--account must be an account id/ },
      { args: ["balance", "show", "--account", `${id}x`], stderr: /--account must be an account id/ },
      // "-5" on its own looks like an option to the parser; either way --amount is named.
      { args: ["balance", "top-up", "--account", id, "--amount", "-5"], stderr: /--amount/ },
      { args: ["balance", "top-up", "--account", id, "--amount=-5"], stderr: /--amount must be a positive/ },
      {
        args: ["balance", "top-up", "--account", id, "--amount", "abc"],
        stderr: /--amount must be a positive/,
      },
      {
        args: ["balance", "top-up", "--account", id, "--amount", "1.23456"],
        stderr: /--amount must be a positive/,
      },
      {
        args: ["balance", "top-up", "--account", id, "--amount", "0"],
        stderr: /--amount must be a positive/,
      },
      {
        args: ["balance", "top-up", "--account", id, "--amount", "1e3"],
        stderr: /--amount must be a positive/,
      },
      { args: ["balance", "top-up", "--account", id, "--amount", ""], stderr: /--amount is required/ },
      { args: ["balance", "top-up", "--account", id], stderr: /--amount is required/ },
      { args: ["balance", "show", "--account", unknown], stderr: new RegExp(`no account ${unknown}`) },
      { args: ["balance", "top-up", "--account", unknown, "--amount", "5"], stderr: /no account/ },
      { args: ["sender-id", "add", "--account", unknown, "SHIRI"], stderr: /no account/ },
      { args: ["api-key", "create", "--account", unknown, "--name", "svc"], stderr: /no account/ },
      { args: ["api-key", "create", "--account", id], stderr: /--name is required/ },
      { args: ["sender-id", "add", "--account", id, "AB"], stderr: /3 to 11 letters or digits, got "AB"/ },
      { args: ["sender-id", "add", "--account", id, "TOO-LONG-SENDER"], stderr: /3 to 11 letters or digits/ },
      { args: ["sender-id", "add", "--account", id, "SH IRI"], stderr: /3 to 11 letters or digits/ },
      { args: ["sender-id", "add", "--account", id], stderr: /expected 1 positional argument/ },
      { args: ["sender-id", "add", "--account", id, "ONE", "TWO"], stderr: /expected 1 positional argument/ },
      { args: ["balance", "show", "--account", id, "--verbose"], stderr: /Unknown option '--verbose'/ },
      { args: ["migrate", "extra"], stderr: /expected 0 positional argument/ },
    ];
    const results = await inParallel(cases, PARALLEL_RUNS, (c) => run(...c.args));
    cases.forEach((c, i) => {
      const res = results[i] as CliResult;
      const label = `shiri ${c.args.join(" ")}`;
      expect(res.code, label).toBe(2);
      expect(res.stdout, label).toBe("");
      expect(res.stderr, label).toMatch(c.stderr);
      expect(res.stderr, label).toMatch(/^shiri: /);
      expect(res.stderr, `${label}: no stack trace`).not.toMatch(/\n\s+at /);
    });
    expect(await counts()).toEqual(before);
  }, 120_000);

  it("no command prints the usage on stdout and exits 0", async () => {
    const res = await run();
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^usage: shiri <command>/);
    expect(res.stdout).toMatch(/sender-id add --account ID SENDER \[--pending\]/);
  });
});
