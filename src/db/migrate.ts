import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import type { Config } from "../config.ts";
import type { Logger } from "../logger.ts";
import { isLockRefusal, lockRetryDelayMs, reportingLockWaits } from "./lock-waits.ts";
import {
  concurrentIndexName,
  type MigrationFile,
  parseMigration,
  takesOnlyWeakLocks,
} from "./migration-file.ts";
import type { Queryable } from "./pool.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));
// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK = 7_426_001;

export interface MigrationResult {
  /** The files this run applied. */
  applied: string[];
  /** The database's latest migration, whichever version of Shiri applied it. */
  current: string | null;
  /** Migrations the database has that this code has no file for: a newer version applied them. */
  unknown: string[];
}

export interface MigrateOptions {
  /** Where lock waits, retries and dropped invalid indexes are told (nothing is logged without one). */
  logger?: Logger | undefined;
  /** Longest a statement waits for a lock that holds off traffic while it waits (MIGRATION_LOCK_TIMEOUT_MS). */
  lockTimeoutMs?: number | undefined;
  /** Tries per migration (or per statement of a file run outside a transaction) (MIGRATION_LOCK_ATTEMPTS). */
  attempts?: number | undefined;
  /** The wait before try n (2, 3, …); doubling from 1 s by default. */
  retryDelayMs?: ((attempt: number) => number) | undefined;
  /** The last file to apply: the database is left at that version (tests and benchmarks). */
  until?: string | undefined;
  /** Where the files are (tests); the shipped migrations by default. */
  directory?: string | undefined;
}

export const MIGRATION_DEFAULTS = { lockTimeoutMs: 2_000, attempts: 10 } as const;

/** The migration settings of the configuration, told to `logger`. */
export function migrationOptions(
  config: Pick<Config, "MIGRATION_LOCK_TIMEOUT_MS" | "MIGRATION_LOCK_ATTEMPTS">,
  logger: Logger,
): MigrateOptions {
  return {
    logger: logger.child({ stage: "migrate" }),
    lockTimeoutMs: config.MIGRATION_LOCK_TIMEOUT_MS,
    attempts: config.MIGRATION_LOCK_ATTEMPTS,
  };
}

/** The migration files this code ships, in order. */
async function migrationFiles(directory = MIGRATIONS_DIR): Promise<string[]> {
  return (await readdir(directory)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
}

export interface MigrationStatus {
  /** Files of this code not applied to the database: it is behind the code. */
  missing: string[];
  /** Applied versions this code has no file for: a newer release migrated the database. */
  unknown: string[];
  applied: number;
  expected: number;
}

let shipped: Promise<string[]> | undefined;

/** Compares the database's applied versions with this code's files (read once per process). */
export async function migrationStatus(db: Queryable): Promise<MigrationStatus> {
  shipped ??= migrationFiles();
  const files = await shipped;
  const { rows } = await db.query<{ version: string }>("SELECT version FROM schema_migrations");
  const applied = new Set(rows.map((r) => r.version));
  const known = new Set(files);
  return {
    missing: files.filter((f) => !applied.has(f)),
    unknown: [...applied].filter((v) => !known.has(v)).sort(),
    applied: applied.size,
    expected: files.length,
  };
}

/**
 * Applies the numbered .sql files in order, under an advisory lock so that several processes
 * starting at once migrate exactly once. Each file runs in its own transaction, or statement by
 * statement when it starts with the no-transaction marker (src/db/migration-file.ts). A statement
 * waits at most `lockTimeoutMs` for a lock that holds off traffic while it waits, says what it
 * waits for, and is tried again (`attempts` in all) when the lock is not granted.
 */
export async function migrate(pool: pg.Pool, options: MigrateOptions = {}): Promise<MigrationResult> {
  const directory = options.directory ?? MIGRATIONS_DIR;
  const all = await migrationFiles(directory);
  const files = options.until === undefined ? all : all.filter((f) => f <= (options.until as string));
  const client = await pool.connect();
  // Checked out, the client has no listener of the pool's: a lost connection must reject, not crash.
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken ??= err;
  };
  client.on("error", onError);
  let locked = false;
  try {
    // A migration may outlast the service's statement timeout; lock waits are set per statement.
    await client.query("SET statement_timeout = 0; SET lock_timeout = 0");
    await takeMigrationLock(client, options.logger);
    locked = true;
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const done = new Set(
      (await client.query<{ version: string }>("SELECT version FROM schema_migrations")).rows.map(
        (r) => r.version,
      ),
    );
    const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? 0;
    const run = new Runner(client, pool, pid, options);
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      const migration = parseMigration(file, await readFile(path.join(directory, file), "utf8"));
      if (migration.transactional) await run.inTransaction(migration);
      else await run.statementByStatement(migration);
      applied.push(file);
    }
    const known = new Set(all);
    const unknown = [...done].filter((version) => !known.has(version)).sort();
    if (unknown.length > 0)
      options.logger?.warn(
        { unknown },
        "the database was migrated by a newer version of Shiri: this code does not know its latest " +
          "migrations and may not write what that version expects",
      );
    return { applied, current: [...done, ...applied].sort().at(-1) ?? null, unknown };
  } finally {
    if (locked) await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => {});
    client.removeListener("error", onError);
    // Discarded rather than pooled: its session has the timeouts switched off.
    client.release(broken ?? true);
  }
}

/**
 * Waits for another process's migration by asking again every half second, never by a blocking
 * pg_advisory_lock: a session blocked in that call holds a snapshot, which a concurrent index
 * build in the migrating process would wait for, while it waits for the build's process: a
 * deadlock that Postgres would break by failing one of them.
 */
async function takeMigrationLock(client: pg.PoolClient, logger: Logger | undefined): Promise<void> {
  let told = false;
  for (;;) {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [
      MIGRATION_LOCK,
    ]);
    if (rows[0]?.locked) return;
    if (!told) logger?.info("another process is migrating the database; waiting for it");
    told = true;
    await sleep(500);
  }
}

class Runner {
  private readonly lockTimeoutMs: number;
  private readonly attempts: number;
  private readonly delay: (attempt: number) => number;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly observer: Queryable,
    private readonly pid: number,
    private readonly options: MigrateOptions,
  ) {
    this.lockTimeoutMs = options.lockTimeoutMs ?? MIGRATION_DEFAULTS.lockTimeoutMs;
    this.attempts = Math.max(1, options.attempts ?? MIGRATION_DEFAULTS.attempts);
    this.delay = options.retryDelayMs ?? ((attempt) => lockRetryDelayMs(attempt));
  }

  /** The whole file and its version row in one transaction, tried again as a whole. */
  async inTransaction(m: MigrationFile): Promise<void> {
    await this.tried(m, null, async () => {
      await this.client.query("BEGIN");
      try {
        await this.client.query(`SET LOCAL lock_timeout = ${this.lockTimeoutMs}`);
        await this.watched(m, null, () => this.client.query(m.sql));
        await this.client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [m.name]);
        await this.client.query("COMMIT");
      } catch (err) {
        await this.client.query("ROLLBACK").catch(() => {});
        throw err;
      }
    });
  }

  /** Each statement committed on its own, the failing one tried again; the version row last. */
  async statementByStatement(m: MigrationFile): Promise<void> {
    for (const [index, statement] of m.statements.entries()) {
      const weak = takesOnlyWeakLocks(statement);
      await this.tried(m, index, async () => {
        const indexName = concurrentIndexName(statement);
        if (indexName) await this.dropInvalidIndex(m, indexName);
        // A concurrent build or drop holds off no reads or writes while it waits: it may wait.
        await this.client.query(`SET lock_timeout = ${weak ? 0 : this.lockTimeoutMs}`);
        await this.watched(m, index, () => this.client.query(statement));
      });
    }
    await this.client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [m.name]);
  }

  /** An index left invalid by a concurrent build that did not finish: dropped, to be built again. */
  private async dropInvalidIndex(m: MigrationFile, name: string): Promise<void> {
    const { rows } = await this.client.query<{ valid: boolean }>(
      `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
      [name],
    );
    if (!rows[0] || rows[0].valid) return;
    this.options.logger?.warn(
      { migration: m.name, index: name },
      "an earlier concurrent build of this index did not finish; dropping it to build it again",
    );
    await this.client.query("SET lock_timeout = 0");
    await this.client.query(`DROP INDEX CONCURRENTLY IF EXISTS "${name}"`);
  }

  private watched<T>(m: MigrationFile, index: number | null, work: () => Promise<T>): Promise<T> {
    const context = { migration: m.name, ...(index === null ? {} : { statement: index + 1 }) };
    const everyMs = Math.max(50, Math.min(1_000, Math.floor(this.lockTimeoutMs / 2)));
    return reportingLockWaits(
      this.pid,
      this.observer,
      { everyMs, logger: this.options.logger, context },
      work,
    );
  }

  /** Runs `attempt` until it succeeds, a lock refusal has happened `attempts` times, or it fails otherwise. */
  private async tried(m: MigrationFile, index: number | null, attempt: () => Promise<void>): Promise<void> {
    const where = index === null ? m.name : `${m.name}, statement ${index + 1}`;
    for (let n = 1; ; n++) {
      try {
        await attempt();
        return;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (!isLockRefusal(err)) throw new Error(`migration ${where} failed: ${message}`);
        if (n >= this.attempts)
          throw new Error(
            `migration ${where} failed: its locks were not granted within ${this.lockTimeoutMs} ms ` +
              `in ${this.attempts} attempts (${message}); see the log for what held them`,
          );
        const waitMs = this.delay(n + 1);
        this.options.logger?.warn(
          {
            migration: m.name,
            statement: index === null ? undefined : index + 1,
            attempt: n,
            wait_ms: waitMs,
            error: message,
          },
          "migration lock not granted in time; trying again",
        );
        await sleep(waitMs);
      }
    }
  }
}
