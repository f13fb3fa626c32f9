import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { loadSimulator, SIMULATOR_NOT_INSTALLED, simulatorInstalled } from "../../src/simulator-loader.ts";

/**
 * The carrier simulator is a development tool (docs/decisions/0010): not compiled into dist/,
 * loaded at run time where its sources are, refused in one line where they are not.
 */
const root = path.resolve(import.meta.dirname, "../..");

describe("the production build", () => {
  it("compiles src/ and the carriers' settings, none of carriers/simulator", () => {
    const listed = execFileSync(
      path.join(root, "node_modules", ".bin", "tsc"),
      ["-p", "tsconfig.build.json", "--listFilesOnly"],
      { cwd: root, encoding: "utf8" },
    )
      .split("\n")
      .filter((file) => file.startsWith(root) && !file.includes("/node_modules/"))
      .map((file) => path.relative(root, file));
    expect(listed).toContain("src/service.ts");
    expect(listed).toContain("src/cli/main.ts");
    expect(listed).toContain("carriers/index.ts");
    expect(listed.filter((file) => file.startsWith("carriers/simulator/"))).toEqual([]);
  });

  it("loads the simulator in a development checkout", async () => {
    expect(simulatorInstalled()).toBe(true);
    const simulator = await loadSimulator();
    expect(typeof simulator.startEmbedded).toBe("function");
    expect(typeof simulator.runAlone).toBe("function");
  });

  it("says in one line that an install without carriers/simulator has none", async () => {
    const tree = mkdtempSync(path.join(tmpdir(), "shiri-tree-"));
    try {
      const base = pathToFileURL(path.join(tree, "dist", "src", "simulator-loader.js")).href;
      expect(simulatorInstalled(base)).toBe(false);
      await expect(loadSimulator(base)).rejects.toThrow(SIMULATOR_NOT_INSTALLED);
      expect(SIMULATOR_NOT_INSTALLED).not.toContain("\n");
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});
