import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import type { Queryable } from "./pool.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));
// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK = 7_426_001;

export interface MigrationResult {
  applied: string[];
  current: string | null;
}

/**
 * Applies the numbered .sql files in order, each in its own transaction, under an advisory
 * lock so that several processes starting at once migrate exactly once.
 */
/** The migration files this code ships, in order. */
async function migrationFiles(): Promise<string[]> {
  return (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
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

export async function migrate(pool: pg.Pool): Promise<MigrationResult> {
  const files = await migrationFiles();
  const client = await pool.connect();
  // Checked out, the client has no listener of the pool's: a lost connection must reject, not crash.
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken ??= err;
  };
  client.on("error", onError);
  try {
    // A migration may outlast the service's statement timeout, and waiting for another process's
    // migration is a lock wait: neither limit applies on this session (discarded after).
    await client.query("SET statement_timeout = 0; SET lock_timeout = 0");
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
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
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(MIGRATIONS_DIR + file, "utf8");
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [file]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${file} failed: ${(err as Error).message}`);
      }
      applied.push(file);
    }
    return { applied, current: files.at(-1) ?? null };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => {});
    client.removeListener("error", onError);
    // Discarded rather than pooled: its session has the timeouts switched off.
    client.release(broken ?? true);
  }
}
