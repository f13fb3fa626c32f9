/**
 * `npm run generate:client`: the TypeScript types of the API, generated from the OpenAPI document
 * by openapi-typescript as an integrator would, written to test/client/shiri-api.ts (committed;
 * openapi-fetch's createClient<paths> types every call with them). With `--check` it writes
 * nothing and fails when the committed file is not what the document gives, naming the command
 * that brings it up to date (test/integration/openapi-client.test.ts runs it so).
 *
 * openapi-typescript builds its output with the TypeScript compiler API, which the project's
 * TypeScript 7 (the native compiler) does not ship. It gets TypeScript 6's, bundled by ts-morph,
 * through a resolve hook that applies to openapi-typescript's own imports alone; package.json's
 * overrides point its peer dependency at the project's typescript so npm installs it at all.
 * docs/decisions/0003-generated-client-types.md says why the types are committed.
 */
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { register } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { OpenAPI3 } from "openapi-typescript";
import { loadConfig } from "../src/config.ts";
import { openApiDocument } from "../src/intake/openapi/document.ts";
import { ENDPOINTS } from "../src/intake/openapi/endpoints.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const CLIENT_TYPES = "test/client/shiri-api.ts";
const check = process.argv.includes("--check");

const module = (code: string) => `data:text/javascript,${encodeURIComponent(code)}`;
const typescriptApi = module(
  `import m from ${JSON.stringify(import.meta.resolve("ts-morph"))}; export default m.ts;`,
);
register(
  module(`export async function resolve(specifier, context, next) {
    if (specifier === "typescript" && context.parentURL?.includes("/node_modules/openapi-typescript/"))
      return { url: ${JSON.stringify(typescriptApi)}, shortCircuit: true };
    return next(specifier, context);
  }`),
);
const { default: openapiTS, astToString } = await import("openapi-typescript");

const document = openApiDocument(ENDPOINTS, loadConfig({})) as unknown as OpenAPI3;
const header = [
  "/**",
  " * Generated from the OpenAPI document (GET /api/v1/openapi.json) by openapi-typescript: do not",
  " * edit. `npm run generate:client` rewrites it; test/integration/openapi-client.test.ts fails",
  " * while it differs from what the document gives.",
  " */",
  "",
].join("\n");
const generated = header + astToString(await openapiTS(document, { silent: true }));
// Formatted as the repository's other sources, so `npm run lint` passes on it as it is.
const biome = spawnSync(
  path.join(root, "node_modules", ".bin", "biome"),
  ["format", `--stdin-file-path=${CLIENT_TYPES}`],
  { cwd: root, input: generated, encoding: "utf8" },
);
if (biome.status !== 0) {
  process.stderr.write(`generate:client: biome format failed: ${biome.stderr}\n`);
  process.exit(1);
}
const target = path.join(root, CLIENT_TYPES);
if (check) {
  const committed = await readFile(target, "utf8").catch(() => "");
  if (committed !== biome.stdout) {
    process.stderr.write(
      `generate:client --check: ${CLIENT_TYPES} is not what the OpenAPI document gives: run npm run generate:client and commit it\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`generate:client --check: ${CLIENT_TYPES} is up to date\n`);
} else {
  await writeFile(target, biome.stdout);
  process.stdout.write(`generate:client: ${CLIENT_TYPES} written\n`);
}
