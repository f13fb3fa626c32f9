import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { migrate } from "../../src/db/migrate.ts";
import { NO_TRANSACTION_MARKER, parseMigration, splitStatements } from "../../src/db/migration-file.ts";
import { createPool } from "../../src/db/pool.ts";
import { createScratchDatabase, type ScratchDatabase, schemaFingerprint } from "./support/databases.ts";
import { capturedLogger } from "./support/log-lines.ts";

/**
 * Issue 28, item 6: migrations that do not stop sending. Files run outside a transaction can be run
 * again from any statement; a concurrent build that did not finish is built again; a lock that is
 * not granted in time is given up, reported with who held it, and tried again; two processes
 * migrating at once while one builds an index concurrently both finish.
 */
const SHIPPED = fileURLToPath(new URL("../../src/db/migrations/", import.meta.url));
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scratch(template?: string): Promise<ScratchDatabase & { pool: pg.Pool }> {
  const db = await createScratchDatabase(template);
  const pool = createPool(db.url, 4);
  cleanups.push(() => db.drop());
  cleanups.push(() => pool.end());
  return { ...db, pool };
}

/** A folder of migration files of the test's own. */
async function migrationsFolder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "shiri-migrations-"));
  for (const [name, sql] of Object.entries(files)) await writeFile(path.join(dir, name), sql);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe("a migration file", () => {
  it("splits at the semicolons that end statements, not those in quotes, dollar quotes or comments", () => {
    const sql = `-- a comment; with a semicolon
CREATE TABLE t (v text DEFAULT 'a;b', "odd;name" int); /* block; comment */
DO $$ BEGIN PERFORM 1; END $$;
CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $body$ SELECT 1; $body$;
INSERT INTO t (v) VALUES ('it''s; fine');
-- only a comment at the end;
`;
    expect(splitStatements(sql)).toEqual([
      `-- a comment; with a semicolon\nCREATE TABLE t (v text DEFAULT 'a;b', "odd;name" int)`,
      "/* block; comment */\nDO $$ BEGIN PERFORM 1; END $$",
      "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $body$ SELECT 1; $body$",
      "INSERT INTO t (v) VALUES ('it''s; fine')",
    ]);
  });

  it("runs in one transaction unless its first line is the marker", () => {
    expect(parseMigration("a.sql", "CREATE TABLE t ();").transactional).toBe(true);
    expect(parseMigration("b.sql", `${NO_TRANSACTION_MARKER}: why\nCREATE TABLE t ();`).transactional).toBe(
      false,
    );
    expect(
      parseMigration("c.sql", `-- text\n${NO_TRANSACTION_MARKER}\nCREATE TABLE t ();`).transactional,
    ).toBe(true);
  });
});

const LARGE_TABLES: Record<string, string> = {
  messages: "001",
  ledger_entries: "001",
  message_parts: "002",
  webhook_events: "003",
};

describe("the shipped migrations", () => {
  it("build every index on a large table concurrently, in a file run outside a transaction", async () => {
    const files = (await readdir(SHIPPED)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
    const offences: string[] = [];
    for (const file of files) {
      const m = parseMigration(file, await readFile(path.join(SHIPPED, file), "utf8"));
      for (const statement of m.statements) {
        const code = statement.replace(/--[^\n]*\n/g, "");
        const build = /CREATE\s+(?:UNIQUE\s+)?INDEX\b(.*?)\bON\s+(?:ONLY\s+)?"?(\w+)"?/is.exec(code);
        const table = build?.[2];
        if (!build || !table) continue;
        const createdIn = LARGE_TABLES[table];
        // The file that creates the table builds its indexes on an empty table.
        if (createdIn === undefined || file.startsWith(createdIn)) continue;
        if (!/^\s*CONCURRENTLY\b/i.test(build[1] ?? "") || m.transactional)
          offences.push(`${file}: ${code.trim().split("\n")[0]}`);
      }
    }
    expect(offences).toEqual([]);
  });

  describe("run outside a transaction, each can be run again after stopping at any statement", async () => {
    const files = (await readdir(SHIPPED)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
    const noTransaction: Array<{ file: string; before: string | undefined }> = [];
    for (const [i, file] of files.entries()) {
      const sql = await readFile(path.join(SHIPPED, file), "utf8");
      if (!parseMigration(file, sql).transactional) noTransaction.push({ file, before: files[i - 1] });
    }

    it("has such files", () => expect(noTransaction.length).toBeGreaterThan(0));

    it.each(noTransaction)("$file", async ({ file, before }) => {
      // The database as the file finds it, kept as a template for each try.
      const template = await createScratchDatabase();
      cleanups.push(() => template.drop());
      const templatePool = createPool(template.url, 2);
      await migrate(templatePool, { until: before });
      await templatePool.end();

      const whole = await scratch(template.name);
      await migrate(whole.pool, { until: file });
      const expected = await schemaFingerprint(whole.pool);

      const { statements } = parseMigration(file, await readFile(path.join(SHIPPED, file), "utf8"));
      // Stopped after k statements (k = all: stopped before its version row was written).
      for (let k = 1; k <= statements.length; k++) {
        const db = await scratch(template.name);
        for (const statement of statements.slice(0, k)) await db.pool.query(statement);
        const result = await migrate(db.pool, { until: file });
        expect(result.applied, `stopped after statement ${k}`).toEqual([file]);
        expect(await schemaFingerprint(db.pool), `stopped after statement ${k}`).toEqual(expected);
      }
    });
  });
});

describe("a concurrent index build that did not finish", () => {
  it("is dropped and built again, where IF NOT EXISTS alone would keep the invalid index", async () => {
    const db = await scratch();
    await db.pool.query("CREATE TABLE t (v int); INSERT INTO t SELECT g % 10 FROM generate_series(1, 100) g");
    // A unique build over duplicates fails and leaves its index behind, invalid, like a cancelled one.
    await expect(db.pool.query("CREATE UNIQUE INDEX CONCURRENTLY t_v_idx ON t (v)")).rejects.toThrow(
      /could not create unique index/,
    );
    await db.pool.query("DELETE FROM t WHERE v <> 0 OR ctid <> (SELECT min(ctid) FROM t WHERE v = 0)");
    const dir = await migrationsFolder({
      "001_unique.sql": `${NO_TRANSACTION_MARKER}\nCREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS t_v_idx ON t (v);\n`,
    });
    const { logger, lines } = capturedLogger();
    await migrate(db.pool, { directory: dir, logger });
    const { rows } = await db.pool.query<{ valid: boolean }>(
      "SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = 't_v_idx'::regclass",
    );
    expect(rows).toEqual([{ valid: true }]);
    expect(lines.map((l) => l.msg)).toContain(
      "an earlier concurrent build of this index did not finish; dropping it to build it again",
    );
  });
});

describe("a migration held up by a lock", () => {
  const TRANSACTIONAL = { "001_add.sql": "ALTER TABLE t ADD COLUMN w int;\n" };
  const STATEMENT_BY_STATEMENT = {
    "001_add.sql": `${NO_TRANSACTION_MARKER}\nALTER TABLE t ADD COLUMN IF NOT EXISTS w int;\n`,
  };

  /** A table t, and a session of another application with a transaction open on it (a long report). */
  async function heldTable(): Promise<{ db: ScratchDatabase & { pool: pg.Pool }; blocker: pg.Client }> {
    const db = await scratch();
    await db.pool.query("CREATE TABLE t (v int)");
    const blocker = new pg.Client({ connectionString: db.url, application_name: "long-report" });
    await blocker.connect();
    cleanups.push(() => blocker.end());
    await blocker.query("BEGIN; SELECT count(*) FROM t");
    return { db, blocker };
  }

  it("gives up after its lock timeout, says who holds the lock, and fails after its attempts", async () => {
    const { db } = await heldTable();
    const dir = await migrationsFolder(TRANSACTIONAL);
    const { logger, lines } = capturedLogger();
    await expect(
      migrate(db.pool, { directory: dir, logger, lockTimeoutMs: 300, attempts: 3, retryDelayMs: () => 10 }),
    ).rejects.toThrow(
      /migration 001_add\.sql failed: its locks were not granted within 300 ms in 3 attempts/,
    );
    const waits = lines.filter((l) => l.msg === "migration waits for a lock");
    expect(waits.length).toBeGreaterThan(0);
    expect(waits[0]).toMatchObject({
      migration: "001_add.sql",
      waiting_for: {
        mode: "AccessExclusiveLock",
        on: "t",
        blockers: [{ application: "long-report", state: "idle in transaction" }],
      },
    });
    expect(lines.filter((l) => l.msg === "migration lock not granted in time; trying again")).toHaveLength(2);
    // Nothing of it stayed: its transaction was rolled back each time, and no version was recorded.
    const { rows } = await db.pool.query(
      "SELECT 1 FROM information_schema.columns WHERE table_name = 't' AND column_name = 'w'",
    );
    expect(rows).toEqual([]);
    expect((await db.pool.query("SELECT version FROM schema_migrations")).rows).toEqual([]);
  });

  it.each([
    { kind: "in a transaction", files: TRANSACTIONAL },
    { kind: "statement by statement", files: STATEMENT_BY_STATEMENT },
  ])("goes on once the lock is granted ($kind)", async ({ files }) => {
    const { db, blocker } = await heldTable();
    const dir = await migrationsFolder(files);
    const { logger, next } = capturedLogger();
    const refused = next("migration lock not granted in time; trying again");
    const migrating = migrate(db.pool, {
      directory: dir,
      logger,
      lockTimeoutMs: 300,
      attempts: 5,
      retryDelayMs: () => 50,
    });
    await refused;
    await blocker.query("COMMIT");
    expect((await migrating).applied).toEqual(["001_add.sql"]);
    const { rows } = await db.pool.query(
      "SELECT 1 FROM information_schema.columns WHERE table_name = 't' AND column_name = 'w'",
    );
    expect(rows).toHaveLength(1);
  });
});

describe("a database migrated by a newer version", () => {
  const OLDER = { "001_table.sql": "CREATE TABLE t (v int);\n" };
  const NEWER = { ...OLDER, "002_column.sql": "ALTER TABLE t ADD COLUMN w int;\n" };

  it("is reported as it is: its latest migration, and the ones this code does not know, with one warning", async () => {
    const db = await scratch();
    await migrate(db.pool, { directory: await migrationsFolder(NEWER) });
    // Rolling back the code, or an old process beside a new one in a rolling upgrade.
    const { logger, lines } = capturedLogger();
    const result = await migrate(db.pool, { directory: await migrationsFolder(OLDER), logger });
    expect(result).toEqual({ applied: [], current: "002_column.sql", unknown: ["002_column.sql"] });
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      unknown: ["002_column.sql"],
      msg: "the database was migrated by a newer version of Shiri: this code does not know its latest migrations and may not write what that version expects",
    });
  });

  it("beside the shipped migrations: a later row is the current one", async () => {
    const db = await scratch();
    const shipped = await migrate(db.pool);
    expect(shipped.unknown).toEqual([]);
    await db.pool.query("INSERT INTO schema_migrations (version) VALUES ('999_future.sql')");
    const { logger, lines } = capturedLogger();
    expect(await migrate(db.pool, { logger })).toEqual({
      applied: [],
      current: "999_future.sql",
      unknown: ["999_future.sql"],
    });
    expect(lines.filter((l) => l.level === 40).map((l) => l.unknown)).toEqual([["999_future.sql"]]);
  });
});

describe("two processes migrating at once", () => {
  it("both finish while one builds an index concurrently (the other waits without a snapshot)", async () => {
    const db = await scratch();
    await db.pool.query("CREATE TABLE t (v int); INSERT INTO t SELECT generate_series(1, 1000)");
    const dir = await migrationsFolder({
      "001_index.sql": `${NO_TRANSACTION_MARKER}\nCREATE INDEX CONCURRENTLY IF NOT EXISTS t_v_idx ON t (v);\n`,
    });
    // A write in progress: the concurrent build waits for it to end.
    const writer = new pg.Client({ connectionString: db.url, application_name: "a-send" });
    await writer.connect();
    cleanups.push(() => writer.end());
    await writer.query("BEGIN; INSERT INTO t VALUES (0)");

    const first = capturedLogger();
    const second = capturedLogger();
    const firstPool = createPool(db.url, 2);
    const secondPool = createPool(db.url, 2);
    cleanups.push(() => firstPool.end());
    cleanups.push(() => secondPool.end());
    const building = migrate(firstPool, { directory: dir, logger: first.logger });
    const buildWaits = first.next("migration waits for a lock");
    expect((await buildWaits).waiting_for).toMatchObject({ blockers: [{ application: "a-send" }] });
    const waiting = migrate(secondPool, { directory: dir, logger: second.logger });
    await second.next("another process is migrating the database; waiting for it");
    await writer.query("COMMIT");
    const results = await Promise.all([building, waiting]);
    expect(results.map((r) => r.applied)).toEqual([["001_index.sql"], []]);
  });
});
