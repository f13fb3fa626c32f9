/**
 * `npm run lint:openapi`: the OpenAPI document, as GET /api/v1/openapi.json serves it (the same
 * builder, on the default configuration), linted by Redocly's CLI with its recommended rules and
 * every warning an error (redocly.yaml). Accepted problems, each with its reason, are in
 * .redocly.lint-ignore.yaml, whose entries name the file this writes: .lint/openapi.json.
 */
import { spawnSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../src/config.ts";
import { openApiDocument } from "../src/intake/openapi/document.ts";
import { ENDPOINTS } from "../src/intake/openapi/endpoints.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const file = path.join(".lint", "openapi.json");

await mkdir(path.join(root, ".lint"), { recursive: true });
await writeFile(
  path.join(root, file),
  `${JSON.stringify(openApiDocument(ENDPOINTS, loadConfig({})), null, 2)}\n`,
);
const lint = spawnSync(
  path.join(root, "node_modules", ".bin", "redocly"),
  ["lint", file, "--config", "redocly.yaml", "--format", "stylish"],
  {
    cwd: root,
    stdio: "inherit",
    // No usage report and no version check sent from CI or a developer's machine.
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
  },
);
if (lint.status !== 0) {
  process.stderr.write(`lint:openapi: redocly lint failed (exit ${lint.status ?? lint.signal})\n`);
  process.exit(1);
}
