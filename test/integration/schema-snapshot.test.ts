import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { schemaSnapshot } from "../../src/db/schema-snapshot.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/**
 * src/db/schema.sql is the schema the migrations leave (the test database is a clone of the
 * migrated template, pg-boss's schema included). CI runs this with `npm test`, so the committed
 * file cannot fall behind a migration.
 */
let database: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 2);
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

describe("the schema in one file", () => {
  it("src/db/schema.sql is what the migrations leave", async () => {
    const committed = await readFile(new URL("../../src/db/schema.sql", import.meta.url), "utf8");
    const generated = await schemaSnapshot(pool);
    if (generated !== committed) expect.fail("src/db/schema.sql is stale: run npm run schema:write");
    // The current rate-limit function, once, as migration 016 replaced 010's; pg-boss's tables not.
    expect(generated.match(/^CREATE OR REPLACE FUNCTION public\.rate_limit_take\(/gm)).toHaveLength(1);
    expect(generated).toContain("FROM rate_limit_lease(p_keys, p_accounts, p_recipients,");
    expect(generated).not.toContain("pgboss.");
  });

  it("shows a change to the schema, and refuses a kind of object it cannot describe", async () => {
    const before = await schemaSnapshot(pool);
    await pool.query("CREATE TABLE scratch_notes (id int PRIMARY KEY, body text NOT NULL DEFAULT '')");
    await pool.query("CREATE INDEX scratch_notes_body_idx ON scratch_notes (body)");
    const after = await schemaSnapshot(pool);
    expect(after).not.toBe(before);
    expect(after).toContain(
      "CREATE TABLE public.scratch_notes (\n  id integer NOT NULL,\n  body text DEFAULT ''::text NOT NULL,\n" +
        "  CONSTRAINT scratch_notes_pkey PRIMARY KEY (id)\n);",
    );
    expect(after).toContain(
      "CREATE INDEX scratch_notes_body_idx ON public.scratch_notes USING btree (body);",
    );

    await pool.query("CREATE DOMAIN scratch_positive AS integer CHECK (VALUE > 0)");
    await expect(schemaSnapshot(pool)).rejects.toThrow(
      "schema snapshot: no description for public.scratch_positive (type d); extend src/db/schema-snapshot.ts",
    );
  });
});
