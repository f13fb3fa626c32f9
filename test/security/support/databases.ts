import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { databaseUrl } from "../../support/global-setup.ts";

/** A database of the test server, created empty or from a template, dropped by `drop`. */
export interface ScratchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function asAdmin<T>(fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: inject("adminDatabaseUrl") });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

/** An empty database (no migrations), or a copy of `template` (which must have no connections). */
export async function createScratchDatabase(template?: string): Promise<ScratchDatabase> {
  const name = `shiri_s_${randomBytes(6).toString("hex")}`;
  await asAdmin((admin) => admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`));
  return {
    name,
    url: databaseUrl(inject("adminDatabaseUrl"), name),
    drop: () =>
      asAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

/**
 * What a schema is made of, as comparable text: every column (type, nullability, default), index
 * (definition and validity), constraint, function and table option of the current schema. Two
 * databases with the same fingerprint have the same schema for every purpose the code has.
 */
export async function schemaFingerprint(db: pg.ClientBase | pg.Pool): Promise<string[]> {
  const { rows } = await db.query<{ line: string }>(
    `SELECT format('column %s.%s #%s %s %s %s', c.relname, a.attname, a.attnum, format_type(a.atttypid, a.atttypmod),
                   CASE WHEN a.attnotnull THEN 'not null' ELSE 'null' END,
                   COALESCE(pg_get_expr(d.adbin, d.adrelid), '')) AS line
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'u', 'p')
        AND a.attnum > 0 AND NOT a.attisdropped
     UNION ALL
     SELECT format('index %s valid=%s', pg_get_indexdef(i.indexrelid), i.indisvalid)
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relnamespace = current_schema()::regnamespace
     UNION ALL
     SELECT format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
       FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
     UNION ALL
     SELECT format('function %s %s', p.oid::regprocedure, md5(pg_get_functiondef(p.oid)))
       FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace
     UNION ALL
     SELECT format('table %s %s %s', c.relname, c.relpersistence, COALESCE(c.reloptions::text, ''))
       FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'u', 'p')
     ORDER BY 1`,
  );
  return rows.map((r) => r.line);
}
