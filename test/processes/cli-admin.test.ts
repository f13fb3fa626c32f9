import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticate } from "../../src/accounts/api-keys.ts";
import { optionsOf } from "../../src/cli/args.ts";
import { COMMANDS } from "../../src/cli/commands.ts";
import { createPool, type Pool } from "../../src/db/pool.ts";
import {
  CLI_TEST_TIMEOUT_MS,
  type CliResult,
  failedWith,
  inParallel,
  oneJsonArray,
  oneJsonObject,
  PARALLEL_RUNS,
  shiri,
  usageError,
} from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/**
 * The operator's side of the `shiri` CLI, run for real against a database of this file's own:
 * help and version, listing and showing accounts, listing and revoking keys, the sender id
 * lifecycle, tables for people, and exit statuses 0 / 1 / 2.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;
/** Nothing listens here: a run that reached for the database would fail. */
const NO_DATABASE = "postgres://postgres@127.0.0.1:1/nothing";

let db: TestDatabase;
let pool: Pool;
const run = (...args: string[]) => shiri(db.url, args);

async function createAccount(name = "Ops test", balance = "25.50") {
  const out = oneJsonObject(await run("account", "create", "--name", name, "--balance", balance));
  return { id: String(out.account_id), key: String(out.api_key), keyId: String(out.api_key_id) };
}

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, 2);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe("shiri --help and --version", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("--help, -h and help print every command of the table on stdout, exit 0, no database", async () => {
    const results = await inParallel([["--help"], ["-h"], ["help"]], PARALLEL_RUNS, (args) =>
      shiri(NO_DATABASE, args),
    );
    for (const res of results) {
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toBe("");
      expect(res.stdout).toMatch(/^usage: shiri <command> \[options\]\n/);
      for (const command of COMMANDS) expect(res.stdout).toMatch(new RegExp(`\n  ${command.name} +\\S`));
    }
  });

  it("no command is a usage error as `shiri account` is: exit 2, every command on stderr", async () => {
    const res = await shiri(NO_DATABASE, []);
    usageError(res, /^shiri: a command is needed\n/, "<command>", "shiri");
    for (const command of COMMANDS) expect(res.stderr).toMatch(new RegExp(`\n  ${command.name} +\\S`));
  });

  it("--version prints the package's version, exit 0, no database", async () => {
    for (const flag of ["--version", "-v"]) {
      const res = await shiri(NO_DATABASE, [flag]);
      expect(res).toEqual({ code: 0, stdout: `shiri ${VERSION}\n`, stderr: "" });
    }
  });

  it("`shiri <command> --help` prints that command's usage only, with every option it parses, exit 0", async () => {
    const cases = COMMANDS.map((c) => [...c.name.split(" "), "--help"]);
    // Help wins wherever it stands, even among options that would not parse.
    cases.push(["sender-id", "add", "--account", "nope", "-h"], ["help", "api-key", "revoke"]);
    const results = await inParallel(cases, PARALLEL_RUNS, (args) => shiri(NO_DATABASE, args));
    cases.forEach((args, i) => {
      const res = results[i] as CliResult;
      const command = COMMANDS.find((c) => args.join(" ").includes(c.name));
      if (!command) throw new Error(`no command for ${args.join(" ")}`);
      const label = `shiri ${args.join(" ")}`;
      expect(res.code, `${label}: ${res.stderr}`).toBe(0);
      expect(res.stderr, label).toBe("");
      expect(res.stdout, label).toMatch(new RegExp(`^usage: shiri ${command.name}( |\n)`));
      expect(res.stdout.match(/usage: shiri/g), label).toHaveLength(1);
      expect(res.stdout, label).not.toContain("commands:");
      expect(res.stdout, label).toContain(command.summary);
      for (const option of Object.keys(optionsOf(command)))
        expect(res.stdout, label).toContain(`--${option}`);
      for (const p of command.positionals ?? []) expect(res.stdout, label).toContain(p.name);
    });
  });

  it("`shiri <group> --help` lists the group's commands, exit 0", async () => {
    const res = await shiri(NO_DATABASE, ["sender-id", "--help"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^usage: shiri sender-id <add\|list\|approve\|reject\|remove> \[options\]\n/);
    for (const sub of ["add", "list", "approve", "reject", "remove"]) {
      expect(res.stdout).toMatch(new RegExp(`\n  sender-id ${sub} +\\S`));
    }
    expect(res.stdout).not.toContain("account create");
  });

  it("a usage error of one command prints that command's usage; an unknown command the list", async () => {
    const [show, unknown, group] = await inParallel(
      [["account", "show"], ["frobnicate", "--help"], ["api-key"]],
      PARALLEL_RUNS,
      (args) => shiri(NO_DATABASE, args),
    );
    usageError(show as CliResult, /^shiri: --account is required\n/, "account show --account ID");
    expect((show as CliResult).stderr).not.toContain("account create");
    usageError(unknown as CliResult, /unknown command "frobnicate"/, "<command>");
    expect((unknown as CliResult).stderr).toContain("  sender-id approve");
    usageError(
      group as CliResult,
      /"api-key" needs a command after it/,
      "api-key <create|narrow|list|revoke>",
    );
  });

  it("a database that cannot be reached is a failure: exit 1, one line", async () => {
    failedWith(await shiri(NO_DATABASE, ["account", "list"]), /^shiri: .*(ECONNREFUSED|connect)/i);
  });
});

describe("shiri account list and show", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("list: every account as a JSON array; show: balance, held, sender ids and key counts", async () => {
    const a = await createAccount("Lister One", "12.5");
    const b = await createAccount("Lister Two", "0");
    oneJsonObject(await run("sender-id", "add", "--account", a.id, "--approved", "LISTA"));
    oneJsonObject(await run("sender-id", "add", "--account", a.id, "LISTB"));
    const extra = oneJsonObject(await run("api-key", "create", "--account", a.id, "--name", "second"));
    oneJsonObject(await run("api-key", "revoke", "--account", a.id, "--key", String(extra.api_key_id)));
    // A charge held by a message in flight, as the send path leaves it.
    await pool.query(
      `INSERT INTO messages (id, account_id, "to", body, sender_id, operator, encoding, segments, charge,
                             charge_currency, status, billing, received_at, created_at)
       VALUES ($1, $2, '+263771234567', 'hi', 'LISTA', 'econet', 'gsm7', 1, 300, 'USD', 'enqueued', 'held',
               now(), now())`,
      [randomUUID(), a.id],
    );

    const list = oneJsonArray(await run("account", "list"));
    const mine = list.filter((r) => r.account_id === a.id || r.account_id === b.id);
    expect(mine).toEqual([
      {
        account_id: a.id,
        name: "Lister One",
        currency: "USD",
        available: 125_000,
        available_display: "12.5000",
        created_at: expect.stringMatching(ISO),
      },
      {
        account_id: b.id,
        name: "Lister Two",
        currency: "USD",
        available: 0,
        available_display: "0.0000",
        created_at: expect.stringMatching(ISO),
      },
    ]);
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM accounts");
    expect(list).toHaveLength(rows[0]?.n ?? -1);

    const shown = oneJsonObject(await run("account", "show", "--account", a.id));
    expect(shown).toEqual({
      account_id: a.id,
      name: "Lister One",
      currency: "USD",
      created_at: expect.stringMatching(ISO),
      available: 125_000,
      held: 300,
      available_display: "12.5000",
      held_display: "0.0300",
      sender_ids: [
        { address: "LISTA", verification_status: "verified" },
        { address: "LISTB", verification_status: "pending" },
      ],
      api_keys_active: 1,
      api_keys_revoked: 1,
    });
  });

  it("--format table: list one aligned row per account under a header; show one field per line", async () => {
    const a = await createAccount("Table Co", "3");
    oneJsonObject(await run("sender-id", "add", "--account", a.id, "--approved", "TABLE"));
    const [list, show] = await Promise.all([
      run("account", "list", "--format", "table"),
      run("account", "show", "--account", a.id, "--format=table"),
    ]);
    expect(list.code, list.stderr).toBe(0);
    const lines = list.stdout.trimEnd().split("\n");
    const header = lines[0] as string;
    expect(header).toMatch(/^account_id +name +currency +available_display +created_at$/);
    const row = lines.find((l) => l.startsWith(a.id)) as string;
    expect(row).toBeDefined();
    // Every column starts where its header does.
    for (const [column, value] of [
      ["name", "Table Co"],
      ["currency", "USD"],
      ["available_display", "3.0000"],
    ] as const) {
      expect(row.indexOf(value, a.id.length), column).toBe(header.indexOf(column));
    }
    expect(() => JSON.parse(list.stdout)).toThrow();

    expect(show.code, show.stderr).toBe(0);
    const fields = Object.fromEntries(
      show.stdout
        .trimEnd()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf(" ")), l.slice(l.search(/ \S/) + 1)]),
    );
    expect(fields).toMatchObject({
      account_id: a.id,
      name: "Table Co",
      available_display: "3.0000",
      held: "0",
      sender_ids: "TABLE verified",
      api_keys_active: "1",
    });
    const valueColumn = (l: string) => l.search(/ \S/) + 1;
    const starts = new Set(show.stdout.trimEnd().split("\n").map(valueColumn));
    expect(starts.size).toBe(1);
  });
});

describe("shiri api-key list and revoke", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("lists keys without their secret or its hash; revoke refuses the key's next use; again changes nothing", async () => {
    const a = await createAccount();
    const second = oneJsonObject(await run("api-key", "create", "--account", a.id, "--name", "billing"));
    const secondKey = String(second.api_key);
    expect(second.api_key_id).toMatch(UUID);
    expect(await authenticate(pool, secondKey, 60)).not.toBeNull();

    const listed = await run("api-key", "list", "--account", a.id);
    const keys = oneJsonArray(listed);
    expect(keys.map((k) => Object.keys(k).sort())).toEqual([
      [
        "active",
        "allowed_ips",
        "api_key_id",
        "created_at",
        "expires_at",
        "last_used_at",
        "name",
        "revoked_at",
        "scopes",
      ],
      [
        "active",
        "allowed_ips",
        "api_key_id",
        "created_at",
        "expires_at",
        "last_used_at",
        "name",
        "revoked_at",
        "scopes",
      ],
    ]);
    // A key made without a policy may do everything, from anywhere, for ever.
    expect(keys.map((k) => [k.scopes, k.allowed_ips, k.expires_at])).toEqual([
      [null, null, null],
      [null, null, null],
    ]);
    expect(keys.map((k) => [k.api_key_id, k.name, k.active, k.revoked_at])).toEqual([
      [a.keyId, "default", true, null],
      [second.api_key_id, "billing", true, null],
    ]);
    expect(keys[1]?.last_used_at).toMatch(ISO);
    for (const secret of [a.key, secondKey, sha256(a.key), sha256(secondKey)]) {
      expect(listed.stdout).not.toContain(secret);
    }

    const revoked = oneJsonObject(
      await run("api-key", "revoke", "--account", a.id, "--key", String(second.api_key_id)),
    );
    expect(revoked).toMatchObject({
      account_id: a.id,
      api_key_id: second.api_key_id,
      name: "billing",
      active: false,
      revoked_at: expect.stringMatching(ISO),
      was_active: true,
    });
    expect(await authenticate(pool, secondKey, 60)).toBeNull();
    expect(await authenticate(pool, a.key, 60)).not.toBeNull();

    const again = oneJsonObject(
      await run("api-key", "revoke", "--account", a.id, "--key", String(second.api_key_id)),
    );
    expect(again).toMatchObject({ active: false, revoked_at: revoked.revoked_at, was_active: false });

    const table = await run("api-key", "list", "--account", a.id, "--format", "table");
    expect(table.code).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(
      /^api_key_id +name +active +created_at +last_used_at +revoked_at +scopes +allowed_ips +expires_at$/,
    );
    expect(table.stdout).toMatch(new RegExp(`\n${second.api_key_id} +billing +false `));
  });

  it("refuses, exit 1 and one line, a key that is not the account's: the other account's key stays active", async () => {
    const a = await createAccount();
    const b = await createAccount();
    const unknownKey = randomUUID();
    const [foreign, unknown] = await Promise.all([
      run("api-key", "revoke", "--account", a.id, "--key", b.keyId),
      run("api-key", "revoke", "--account", a.id, "--key", unknownKey),
    ]);
    failedWith(foreign, new RegExp(`^shiri: account ${a.id} has no API key ${b.keyId}\n$`));
    failedWith(unknown, new RegExp(`has no API key ${unknownKey}`));
    expect(await authenticate(pool, b.key, 60)).not.toBeNull();
    usageError(
      await run("api-key", "revoke", "--account", a.id, "--key", "k1"),
      /--key must be an API key id \(a UUID\), got "k1"/,
      "api-key revoke",
    );
    usageError(await run("api-key", "revoke", "--account", a.id), /--key is required/, "api-key revoke");
  });
});

describe("shiri sender-id list, approve, reject and remove", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("walks a sender id from pending to verified to rejected to removed, freeing its place", async () => {
    const a = await createAccount();
    const status = async (address: string) =>
      (
        await pool.query(
          "SELECT verification_status FROM sender_ids WHERE account_id = $1 AND address = $2",
          [a.id, address],
        )
      ).rows[0]?.verification_status;
    for (const s of ["ALPHA", "BRAVO", "CHARLIE"]) {
      oneJsonObject(await run("sender-id", "add", "--account", a.id, s));
    }
    expect(oneJsonArray(await run("sender-id", "list", "--account", a.id))).toEqual([
      { address: "ALPHA", verification_status: "pending" },
      { address: "BRAVO", verification_status: "pending" },
      { address: "CHARLIE", verification_status: "pending" },
    ]);

    const approved = oneJsonObject(await run("sender-id", "approve", "--account", a.id, "ALPHA"));
    expect(approved).toEqual({
      account_id: a.id,
      address: "ALPHA",
      verification_status: "verified",
      previous_status: "pending",
    });
    expect(await status("ALPHA")).toBe("verified");
    const again = oneJsonObject(await run("sender-id", "approve", "--account", a.id, "ALPHA"));
    expect(again).toMatchObject({ verification_status: "verified", previous_status: "verified" });

    const rejected = oneJsonObject(await run("sender-id", "reject", "--account", a.id, "ALPHA"));
    expect(rejected).toMatchObject({ verification_status: "rejected", previous_status: "verified" });
    expect(await status("ALPHA")).toBe("rejected");

    // A rejected sender id still holds one of the three places, until it is removed.
    failedWith(await run("sender-id", "add", "--account", a.id, "DELTA"), /at most 3 sender ids/);
    const removed = oneJsonObject(await run("sender-id", "remove", "--account", a.id, "ALPHA"));
    expect(removed).toEqual({
      account_id: a.id,
      address: "ALPHA",
      verification_status: "rejected",
      removed: true,
    });
    expect(await status("ALPHA")).toBeUndefined();
    oneJsonObject(await run("sender-id", "add", "--account", a.id, "DELTA"));

    const table = await run("sender-id", "list", "--account", a.id, "--format", "table");
    expect(table).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "address  verification_status",
        "BRAVO    pending",
        "CHARLIE  pending",
        "DELTA    pending",
        "",
      ].join("\n"),
    });
  });

  it("a sender id the account does not have: exit 1, one line, nothing changed", async () => {
    const a = await createAccount();
    const b = await createAccount();
    oneJsonObject(await run("sender-id", "add", "--account", b.id, "--approved", "THEIRS"));
    const cases = [
      ["sender-id", "approve", "--account", a.id, "THEIRS"],
      ["sender-id", "reject", "--account", a.id, "THEIRS"],
      ["sender-id", "remove", "--account", a.id, "THEIRS"],
      ["sender-id", "approve", "--account", a.id, "NOSUCH"],
    ];
    const results = await inParallel(cases, PARALLEL_RUNS, (args) => run(...args));
    cases.forEach((args, i) => {
      failedWith(
        results[i] as CliResult,
        new RegExp(`^shiri: account ${a.id} has no sender id ${args[4]}\n$`),
        args.join(" "),
      );
    });
    expect(oneJsonArray(await run("sender-id", "list", "--account", b.id))).toEqual([
      { address: "THEIRS", verification_status: "verified" },
    ]);
    expect(oneJsonArray(await run("sender-id", "list", "--account", a.id))).toEqual([]);
    const empty = await run("sender-id", "list", "--account", a.id, "--format", "table");
    expect(empty.stdout).toBe("(none)\n");
  });
});

describe("shiri: failures and usage errors of the operator commands", {
  timeout: CLI_TEST_TIMEOUT_MS,
}, () => {
  it("an unknown account: exit 1 with one line for every command that takes one", async () => {
    const unknown = randomUUID();
    const cases = [
      ["account", "show", "--account", unknown],
      ["api-key", "list", "--account", unknown],
      ["api-key", "revoke", "--account", unknown, "--key", randomUUID()],
      ["sender-id", "list", "--account", unknown],
      ["sender-id", "approve", "--account", unknown, "SHIRI"],
      ["sender-id", "reject", "--account", unknown, "SHIRI"],
      ["sender-id", "remove", "--account", unknown, "SHIRI"],
    ];
    const results = await inParallel(cases, PARALLEL_RUNS, (args) => run(...args));
    cases.forEach((args, i) => {
      failedWith(results[i] as CliResult, new RegExp(`^shiri: no account ${unknown}\n$`), args.join(" "));
    });
  });

  it("bad options and arguments: exit 2 with that command's usage, before reaching for any database", async () => {
    const id = randomUUID();
    const cases: Array<{ args: string[]; stderr: RegExp; usage: string }> = [
      { args: ["account", "list", "extra"], stderr: /unexpected argument "extra"/, usage: "account list" },
      {
        args: ["account", "list", "--format", "xml"],
        stderr: /--format must be one of json, table, got "xml"/,
        usage: "account list",
      },
      {
        args: ["account", "show", "--account", "1"],
        stderr: /--account must be an account id/,
        usage: "account show",
      },
      { args: ["api-key", "list"], stderr: /--account is required/, usage: "api-key list" },
      {
        args: ["sender-id", "list", "--account", id, "X"],
        stderr: /unexpected argument "X"/,
        usage: "sender-id list",
      },
      {
        args: ["sender-id", "approve", "--account", id],
        stderr: /SENDER is required/,
        usage: "sender-id approve",
      },
      {
        args: ["sender-id", "reject", "--account", id, "a-b"],
        stderr: /3 to 11 letters or digits/,
        usage: "sender-id reject",
      },
      {
        args: ["sender-id", "remove", "--account", id, "--pending", "ABC"],
        stderr: /Unknown option '--pending'/,
        usage: "sender-id remove",
      },
      {
        args: ["sender-id", "verify"],
        stderr: /unknown command "sender-id verify"/,
        usage: "sender-id <add|",
      },
      {
        args: ["balance", "top-up", "--account", id, "--amount", "1000000000"],
        stderr: /at most 999999999\.9999, got "1000000000"/,
        usage: "balance top-up",
      },
      // Postgres's cidr refuses bits past the prefix: this was exit 1 with the database's words.
      {
        args: [
          "api-key",
          "create",
          "--account",
          id,
          "--name",
          "k",
          "--allowed-ips",
          "10.0.0.0/8, 10.0.0.1/8",
        ],
        stderr: /--allowed-ips takes addresses or CIDRs with no bit set past the prefix/,
        usage: "api-key create",
      },
      // A date alone was taken as midnight UTC.
      {
        args: ["api-key", "create", "--account", id, "--name", "k", "--expires-at", "2099-01-01"],
        stderr: /--expires-at must be a time to come, RFC 3339 with its offset; got "2099-01-01"/,
        usage: "api-key create",
      },
      // Refused before a bind slot is taken, not after a bind.
      {
        args: ["carrier", "check", "econet", "--to", "12"],
        stderr: /--to must be a number that routes to an operator/,
        usage: "carrier check",
      },
      {
        args: ["carrier", "check", "econet", "--from", "BAD SENDER WAY TOO LONG"],
        stderr: /--from must be a sender id/,
        usage: "carrier check",
      },
    ];
    // Against a database that is not there: a usage error is found before any connection.
    const results = await inParallel(cases, PARALLEL_RUNS, (c) => shiri(NO_DATABASE, c.args));
    cases.forEach((c, i) => {
      usageError(results[i] as CliResult, c.stderr, c.usage, `shiri ${c.args.join(" ")}`);
    });
  });

  it("carrier check with no SMSC answering: exit 1, its report alone on stdout, the session's log and one line saying why on stderr", async () => {
    const result = await shiri(db.url, ["carrier", "check", "econet"], {
      env: { LOG_LEVEL: "debug", SMPP_ECONET_HOST: "127.0.0.1", SMPP_ECONET_PORT: "1" },
    });
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({
      link: "econet",
      bound: false,
      bind_error: expect.stringMatching(/ECONNREFUSED/),
    });
    expect(result.stderr).toMatch(/"level":/);
    // Among the JSON log lines, the one line every failure writes, with the cause.
    const said = result.stderr.split("\n").filter((line) => line.startsWith("shiri: "));
    expect(said).toEqual([
      expect.stringMatching(/^shiri: econet did not bind: connect ECONNREFUSED 127\.0\.0\.1:1$/),
    ]);
  });
});
