/**
 * `npm run check:compose`: docker-compose.yml validated without a Docker engine. dclint checks it
 * against the Compose Specification's JSON schema (and the lint rules .dclintrc keeps); then
 * scripts/lib/compose.ts checks it against the code, with ${VAR} substituted from .env.example.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { checkCompose } from "./lib/compose.ts";

const root = path.resolve(import.meta.dirname, "..");
const dclint = spawnSync(
  path.join(root, "node_modules", ".bin", "dclint"),
  ["--no-color", "--max-warnings", "0", "docker-compose.yml"],
  { cwd: root, encoding: "utf8" },
);
let failed = 0;
if (dclint.status === 0)
  process.stdout.write("PASS  dclint: docker-compose.yml matches the Compose Specification\n");
else {
  failed++;
  process.stdout.write(`FAIL  dclint (exit ${dclint.status}):\n${dclint.stdout}${dclint.stderr}\n`);
}
const problems = checkCompose(root);
for (const problem of problems) process.stdout.write(`FAIL  ${problem}\n`);
if (problems.length === 0)
  process.stdout.write(
    "PASS  docker-compose.yml against the code and .env.example: variables, ports, healthchecks, restart policies, secrets\n",
  );
failed += problems.length;
process.stdout.write(`compose: ${failed === 0 ? "valid" : `${failed} problem(s)`}\n`);
process.exit(failed === 0 ? 0 : 1);
