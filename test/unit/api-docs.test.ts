import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ERRORS, type ErrorEntry } from "../../src/intake/errors.ts";
import { ENDPOINTS } from "../../src/intake/openapi/endpoints.ts";

/**
 * docs/api.md is the API reference: it must describe every endpoint of the OpenAPI document and
 * every error of the catalogue, show the verification snippets exactly as the tested files hold
 * them. Its links, like every page's, are checked by docs-links.test.ts.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const apiDoc = read("docs/api.md");

describe("docs/api.md", () => {
  it("has a section for every endpoint of the document, and none for an endpoint that does not exist", () => {
    const sections = [...apiDoc.matchAll(/^### (GET|POST|PUT|PATCH|DELETE) (\S+)$/gm)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    const endpoints = ENDPOINTS.map((e) => `${e.method.toUpperCase()} ${e.path}`);
    expect([...sections].sort()).toEqual([...endpoints].sort());
  });

  it("lists every error of the catalogue with its status, shape, code and texts", () => {
    // Table rows as their first five cells, however the formatter pads them.
    const rows = new Set(
      apiDoc
        .split("\n")
        .filter((line) => line.startsWith("|"))
        .map((line) =>
          line
            .split("|")
            .slice(1, 6)
            .map((cell) => cell.trim())
            .join(" | "),
        ),
    );
    const missing: string[] = [];
    for (const entry of Object.values(ERRORS) as ErrorEntry[])
      for (const shape of ["legacy", "kit"] as const) {
        const texts = entry[shape];
        if (!texts) continue;
        const label = shape === "kit" ? "Kit" : "legacy";
        const row = `${entry.status} | ${label} | \`${texts.code}\` | ${texts.message} | ${texts.description}`;
        if (!rows.has(row)) missing.push(row);
      }
    expect(missing).toEqual([]);
  });

  it("shows each verification snippet exactly as its file (the tested code is the documented code)", () => {
    const languages: Record<string, string> = { mjs: "js", py: "python", go: "go", php: "php" };
    const files = readdirSync(path.join(ROOT, "docs/webhook-verification"));
    expect(files.sort()).toEqual(["verify.go", "verify.mjs", "verify.php", "verify.py"]);
    for (const file of files) {
      const code = read(`docs/webhook-verification/${file}`);
      const language = languages[path.extname(file).slice(1)];
      expect(apiDoc.includes(`\`\`\`${language}\n${code}\`\`\``), file).toBe(true);
    }
  });
});

describe("the README", () => {
  it("sends readers to docs/api.md for the API", () => {
    expect(read("README.md")).toContain("](docs/api.md)");
  });
});
