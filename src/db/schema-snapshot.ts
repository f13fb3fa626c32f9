import type pg from "pg";

/**
 * The schema the migrations leave, as text: src/db/schema.sql (`npm run schema:write` writes it,
 * test/integration/schema-snapshot.test.ts holds it to the migrations). Read from the catalogs
 * rather than by pg_dump, so every Postgres the tests run on (15 and up) and a machine without
 * pg_dump print the same text. docs/decisions/0009-tests-by-folder-and-schema-snapshot.md says why.
 */

/** pg-boss's own schema: pg-boss creates and migrates it, not Shiri's migrations. */
const QUEUE_SCHEMA = "pgboss";

/** The schemas the snapshot describes: every one but Postgres's own and pg-boss's. */
const OUR_SCHEMAS = `
  SELECT n.oid FROM pg_namespace n
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', '${QUEUE_SCHEMA}')
     AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%'`;

/** Objects an extension brought (none today): the extension's, not ours to describe. */
const NOT_FROM_EXTENSION = (catalog: string, oid: string) => `
  NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = '${catalog}'::regclass
                 AND d.objid = ${oid} AND d.deptype = 'e')`;

const HEADER = `-- GENERATED FILE: do not edit. The schema after every migration in src/db/migrations/, read
-- from the catalogs by src/db/schema-snapshot.ts; \`npm run schema:write\` rewrites it and
-- test/integration/schema-snapshot.test.ts fails while it is stale. pg-boss's schema (pgboss)
-- is pg-boss's own and left out. A change to the schema is a new migration, never an edit here.`;

type Row = Record<string, unknown>;

/** A heading and its statements, or nothing when there are none. */
function section(title: string, statements: string[], separator = "\n\n"): string {
  return statements.length > 0 ? `-- ${title}\n\n${statements.join(separator)}` : "";
}

async function rows<T extends Row>(db: pg.ClientBase, sql: string): Promise<T[]> {
  return (await db.query<T>(sql)).rows;
}

/** The schema of the database `pool` connects to, as the text of src/db/schema.sql. */
export async function schemaSnapshot(pool: pg.Pool): Promise<string> {
  const client = await pool.connect();
  try {
    // Read-only, one snapshot of the catalogs; with pg_catalog alone on the search path every
    // name of ours prints schema-qualified, whatever the role's search_path.
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    await client.query("SET LOCAL search_path = pg_catalog");
    await refuseUndescribed(client);
    const text = [
      `${HEADER}\n${await migrationsLine(client)}`,
      section("Schemas", await schemas(client)),
      section("Types", await types(client)),
      section("Sequences", await sequences(client), "\n"),
      section("Tables", await tables(client)),
      section(
        "Indexes (those of a primary key or unique constraint show with its table)",
        await indexes(client),
        "\n",
      ),
      section("Views", await views(client)),
      section("Functions", await functions(client)),
      section("Triggers", await triggers(client), "\n"),
    ];
    await client.query("COMMIT");
    return `${text.filter((part) => part !== "").join("\n\n")}\n`;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Kinds of object the text below does not describe fail loudly rather than go missing from the
 * snapshot: partitioned and foreign tables, composite types and domains.
 */
async function refuseUndescribed(db: pg.ClientBase): Promise<void> {
  const found = await rows<{ name: string; kind: string }>(
    db,
    `SELECT c.oid::regclass::text AS name, c.relkind::text AS kind FROM pg_class c
      WHERE c.relnamespace IN (${OUR_SCHEMAS}) AND c.relkind IN ('p', 'f', 'c')
     UNION ALL
     SELECT t.oid::regtype::text, 'type ' || t.typtype::text FROM pg_type t
      WHERE t.typnamespace IN (${OUR_SCHEMAS}) AND t.typtype NOT IN ('b', 'c', 'e')
        AND ${NOT_FROM_EXTENSION("pg_type", "t.oid")}
     ORDER BY 1`,
  );
  if (found.length > 0) {
    const list = found.map((f) => `${f.name} (${f.kind})`).join(", ");
    throw new Error(`schema snapshot: no description for ${list}; extend src/db/schema-snapshot.ts`);
  }
}

async function migrationsLine(db: pg.ClientBase): Promise<string> {
  const applied = await rows<{ version: string }>(
    db,
    `SELECT version FROM public.schema_migrations ORDER BY version COLLATE "C"`,
  );
  const last = applied.at(-1)?.version ?? "none";
  return `-- Migrations applied: ${applied.length}, the last ${last}.`;
}

async function schemas(db: pg.ClientBase): Promise<string[]> {
  const found = await rows<{ name: string }>(
    db,
    `SELECT quote_ident(nspname) AS name FROM pg_namespace
      WHERE oid IN (${OUR_SCHEMAS}) AND nspname <> 'public' ORDER BY nspname COLLATE "C"`,
  );
  return found.map((s) => `CREATE SCHEMA ${s.name};`);
}

async function types(db: pg.ClientBase): Promise<string[]> {
  const found = await rows<{ name: string; labels: string[] }>(
    db,
    `SELECT t.oid::regtype::text AS name,
            array_agg(quote_literal(e.enumlabel) ORDER BY e.enumsortorder) AS labels
       FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE t.typnamespace IN (${OUR_SCHEMAS}) AND ${NOT_FROM_EXTENSION("pg_type", "t.oid")}
      GROUP BY t.oid ORDER BY t.oid::regtype::text COLLATE "C"`,
  );
  return found.map((e) => `CREATE TYPE ${e.name} AS ENUM (${e.labels.join(", ")});`);
}

async function sequences(db: pg.ClientBase): Promise<string[]> {
  const found = await rows<{
    name: string;
    type: string;
    start: string;
    increment: string;
    min: string;
    max: string;
    cache: string;
    cycle: boolean;
    owner: string | null;
  }>(
    db,
    `SELECT c.oid::regclass::text AS name, format_type(s.seqtypid, NULL) AS type,
            s.seqstart::text AS start, s.seqincrement::text AS increment,
            s.seqmin::text AS min, s.seqmax::text AS max, s.seqcache::text AS cache, s.seqcycle AS cycle,
            (SELECT d.refobjid::regclass::text || '.' || quote_ident(a.attname)
               FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
              WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')) AS owner
       FROM pg_class c JOIN pg_sequence s ON s.seqrelid = c.oid
      WHERE c.relnamespace IN (${OUR_SCHEMAS}) AND ${NOT_FROM_EXTENSION("pg_class", "c.oid")}
      ORDER BY c.oid::regclass::text COLLATE "C"`,
  );
  return found.map(
    (s) =>
      `CREATE SEQUENCE ${s.name} AS ${s.type} START ${s.start} INCREMENT ${s.increment} ` +
      `MINVALUE ${s.min} MAXVALUE ${s.max} CACHE ${s.cache}${s.cycle ? " CYCLE" : ""}` +
      `${s.owner ? ` OWNED BY ${s.owner}` : ""};`,
  );
}

async function tables(db: pg.ClientBase): Promise<string[]> {
  const found = await rows<{ name: string; unlogged: boolean; options: string[] | null }>(
    db,
    `SELECT c.oid::regclass::text AS name, c.relpersistence = 'u' AS unlogged,
            (SELECT array_agg(o ORDER BY o COLLATE "C") FROM unnest(c.reloptions) o) AS options
       FROM pg_class c
      WHERE c.relnamespace IN (${OUR_SCHEMAS}) AND c.relkind = 'r'
        AND ${NOT_FROM_EXTENSION("pg_class", "c.oid")}
      ORDER BY c.oid::regclass::text COLLATE "C"`,
  );
  const columns = await rows<{ table: string; line: string }>(
    db,
    `SELECT a.attrelid::regclass::text AS table,
            quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
            || CASE WHEN a.attcollation <> t.typcollation
                    THEN ' COLLATE ' || a.attcollation::regcollation::text ELSE '' END
            || CASE a.attidentity WHEN 'a' THEN ' GENERATED ALWAYS AS IDENTITY'
                                  WHEN 'd' THEN ' GENERATED BY DEFAULT AS IDENTITY' ELSE '' END
            || CASE WHEN a.attgenerated = 's'
                    THEN ' GENERATED ALWAYS AS (' || pg_get_expr(d.adbin, d.adrelid) || ') STORED'
                    WHEN d.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid)
                    ELSE '' END
            || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END AS line
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_type t ON t.oid = a.atttypid
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE c.relnamespace IN (${OUR_SCHEMAS}) AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attrelid, a.attnum`,
  );
  // NOT NULL shows on its column: Postgres 18 also lists it as a constraint (contype 'n'), 15 not.
  const constraints = await rows<{ table: string; line: string }>(
    db,
    `SELECT k.conrelid::regclass::text AS table,
            'CONSTRAINT ' || quote_ident(k.conname) || ' ' || pg_get_constraintdef(k.oid) AS line
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
      WHERE c.relnamespace IN (${OUR_SCHEMAS}) AND c.relkind = 'r' AND k.contype <> 'n'
      ORDER BY k.conrelid, position(k.contype IN 'pufcxt'), k.conname COLLATE "C"`,
  );
  return found.map((table) => {
    const lines = [...columns, ...constraints].filter((l) => l.table === table.name).map((l) => l.line);
    const options = table.options ? ` WITH (${table.options.join(", ")})` : "";
    return (
      `CREATE ${table.unlogged ? "UNLOGGED " : ""}TABLE ${table.name} (\n` +
      `${lines.map((l) => `  ${l}`).join(",\n")}\n)${options};`
    );
  });
}

/** Indexes of their own; those a primary key, unique or exclusion constraint made show with it. */
async function indexes(db: pg.ClientBase): Promise<string[]> {
  const found = await rows<{ definition: string }>(
    db,
    `SELECT pg_get_indexdef(i.indexrelid) || ';' AS definition
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relnamespace IN (${OUR_SCHEMAS})
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid
                           AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u', 'x'))
      ORDER BY i.indrelid::regclass::text COLLATE "C", c.relname COLLATE "C"`,
  );
  return found.map((i) => i.definition);
}

async function views(db: pg.ClientBase): Promise<string[]> {
  const found = await rows<{ line: string }>(
    db,
    `SELECT 'CREATE ' || CASE c.relkind WHEN 'm' THEN 'MATERIALIZED ' ELSE '' END || 'VIEW '
            || c.oid::regclass::text || ' AS\n' || rtrim(pg_get_viewdef(c.oid, true), ';') || ';' AS line
       FROM pg_class c
      WHERE c.relnamespace IN (${OUR_SCHEMAS}) AND c.relkind IN ('v', 'm')
        AND ${NOT_FROM_EXTENSION("pg_class", "c.oid")}
      ORDER BY c.oid::regclass::text COLLATE "C"`,
  );
  return found.map((v) => v.line);
}

async function functions(db: pg.ClientBase): Promise<string[]> {
  const found = await rows<{ definition: string }>(
    db,
    `SELECT rtrim(pg_get_functiondef(p.oid), E'\n') || ';' AS definition
       FROM pg_proc p
      WHERE p.pronamespace IN (${OUR_SCHEMAS}) AND p.prokind IN ('f', 'p')
        AND ${NOT_FROM_EXTENSION("pg_proc", "p.oid")}
      ORDER BY p.proname COLLATE "C", pg_get_function_identity_arguments(p.oid) COLLATE "C"`,
  );
  return found.map((f) => f.definition);
}

async function triggers(db: pg.ClientBase): Promise<string[]> {
  const found = await rows<{ definition: string }>(
    db,
    `SELECT pg_get_triggerdef(t.oid) || ';' AS definition
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE c.relnamespace IN (${OUR_SCHEMAS}) AND NOT t.tgisinternal
      ORDER BY t.tgrelid::regclass::text COLLATE "C", t.tgname COLLATE "C"`,
  );
  return found.map((t) => t.definition);
}
