/**
 * `npm run build`: compiles src/ and carriers/ to JavaScript in dist/ (tsconfig.build.json, the
 * native `tsc`, `.ts` import specifiers rewritten to `.js`), then copies what is not TypeScript
 * and is read at run time (the SQL migrations) next to the code that reads it.
 */
import { spawnSync } from "node:child_process";
import { cp, mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");

await rm(dist, { recursive: true, force: true });
const tsc = spawnSync(path.join(root, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.build.json"], {
  cwd: root,
  stdio: "inherit",
});
if (tsc.status !== 0) {
  process.stderr.write(`build: tsc failed (exit ${tsc.status ?? tsc.signal})\n`);
  process.exit(1);
}

// src/db/migrate.ts reads ./migrations/ beside itself, so dist/src/db/migrations/ holds them.
const migrations = path.join(root, "src", "db", "migrations");
const target = path.join(dist, "src", "db", "migrations");
await mkdir(target, { recursive: true });
const sql = (await readdir(migrations)).filter((name) => name.endsWith(".sql"));
for (const name of sql) await cp(path.join(migrations, name), path.join(target, name));
process.stdout.write(`build: dist/ compiled, ${sql.length} migrations copied\n`);
