import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createVitest } from "vitest/node";

/**
 * The folder a test lies in decides which command runs it; there is no list to keep. A file in
 * a folder of its own, or one no config's patterns reach, would never run: this test fails
 * first. Each config is asked for its files the way `vitest run` finds them (its include and
 * exclude patterns), not by reading the patterns here again.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Each folder under test/ that holds tests, and the config (the npm script) that runs it. */
const RUN_BY: Record<string, string> = {
  unit: "vitest.config.ts",
  integration: "vitest.config.ts",
  security: "vitest.config.ts",
  processes: "vitest.processes.config.ts",
  faults: "vitest.faults.config.ts",
};
const CONFIGS = [...new Set(Object.values(RUN_BY))];

/** "unit" for "test/unit/money.test.ts". */
const folderOf = (file: string): string => file.split("/")[1] ?? "";

/** Every *.test.ts under test/, relative to the checkout ("test/unit/money.test.ts"). */
function testFiles(): string[] {
  return readdirSync(path.join(ROOT, "test"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".test.ts"))
    .map((file) => path.posix.join("test", file.split(path.sep).join("/")))
    .sort();
}

/** The files `vitest run -c <config>` would run, relative to the checkout. */
async function filesRunBy(config: string): Promise<string[]> {
  const vitest = await createVitest("test", { root: ROOT, config, watch: false, run: true }, {}, {});
  try {
    const specifications = await vitest.globTestSpecifications();
    return specifications.map((spec) => path.relative(ROOT, spec.moduleId).split(path.sep).join("/"));
  } finally {
    await vitest.close();
  }
}

describe("tests are found by folder", () => {
  it("every test file lies in one of the five folders", () => {
    const files = testFiles();
    expect(files.length).toBeGreaterThan(0);
    const strays = files.filter((file) => !Object.hasOwn(RUN_BY, folderOf(file)));
    expect(strays, `test files outside ${Object.keys(RUN_BY).join(", ")}`).toEqual([]);
  });

  it("every test file is run by exactly one config, the one its folder names", async () => {
    const runBy = new Map<string, string[]>();
    for (const config of CONFIGS) {
      const found = await filesRunBy(config);
      expect(found.length, `${config} finds no test`).toBeGreaterThan(0);
      for (const file of found) runBy.set(file, [...(runBy.get(file) ?? []), config]);
    }
    // Files outside the five folders are the test above's to report.
    const filed = testFiles().filter((file) => Object.hasOwn(RUN_BY, folderOf(file)));
    const expected = filed.map((file) => [file, [RUN_BY[folderOf(file)]]]);
    const actual = filed.map((file) => [file, runBy.get(file) ?? []]);
    expect(actual).toEqual(expected);
    // Nothing a config runs lies outside those folders (a pattern reaching too far).
    expect([...runBy.keys()].sort()).toEqual(filed);
  });
});
