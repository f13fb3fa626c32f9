/**
 * `npm run schema:write`: migrates a scratch database from nothing and writes what the migrations
 * leave to src/db/schema.sql (src/db/schema-snapshot.ts), the schema read in one file.
 * test/integration/schema-snapshot.test.ts fails while the committed file is not this text. The
 * server is DATABASE_URL's, else this checkout's embedded Postgres (started if nobody runs it);
 * the scratch database is dropped afterwards.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import pg from "pg";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { createPool } from "../src/db/pool.ts";
import { schemaSnapshot } from "../src/db/schema-snapshot.ts";

const SCHEMA_FILE = new URL("../src/db/schema.sql", import.meta.url);

// A development tool: without DATABASE_URL it may start the embedded Postgres, as npm start does.
const server = await openDatabase(loadConfig({ SHIRI_ENV: "development", ...process.env }));
const scratch = `shiri_schema_${randomBytes(6).toString("hex")}`;
const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
try {
  await admin.query(`CREATE DATABASE ${scratch}`);
  const url = new URL(server.url);
  url.pathname = `/${scratch}`;
  const pool = createPool(url.toString(), 2);
  try {
    await migrate(pool);
    await writeFile(SCHEMA_FILE, await schemaSnapshot(pool));
  } finally {
    await pool.end();
  }
  process.stdout.write("schema: wrote src/db/schema.sql\n");
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`);
  await admin.end();
  await server.stop();
}
