import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { engineRefusal, satisfies } from "../../bin/node-engines.mjs";

describe("the Node.js versions engines names", () => {
  it("reads caret and floor ranges joined by ||", () => {
    const range = "^20.19.0 || ^22.12.0 || ^24.0.0";
    for (const ok of ["20.19.0", "v20.20.2", "22.12.0", "22.23.3", "24.0.0", "24.21.0"]) {
      expect(satisfies(ok, range), ok).toBe(true);
    }
    for (const no of ["18.20.0", "20.18.9", "21.7.0", "22.11.0", "23.0.0", "25.1.0", "26.10.0"]) {
      expect(satisfies(no, range), no).toBe(false);
    }
    expect(satisfies("26.0.0", ">=22.12.0")).toBe(true);
    expect(satisfies("22.11.9", ">=22.12.0")).toBe(false);
  });

  it("refuses another version in one line that says what to do, unless SHIRI_ANY_NODE=1", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "shiri-engines-"));
    const pkg = path.join(dir, "package.json");
    writeFileSync(pkg, JSON.stringify({ engines: { node: "^22.12.0" } }));
    const refusal = engineRefusal("20.20.2", pkg, {});
    expect(refusal).toMatch(/^shiri: Node\.js 20\.20\.2 is not one .*\^22\.12\.0.*SHIRI_ANY_NODE=1/);
    expect(refusal).not.toContain("\n");
    expect(engineRefusal("22.23.3", pkg, {})).toBeNull();
    expect(engineRefusal("20.20.2", pkg, { SHIRI_ANY_NODE: "1" })).toBeNull();
  });

  it("the running Node.js is one this checkout's engines names (CI runs each)", () => {
    expect(
      engineRefusal(process.versions.node, new URL("../../package.json", import.meta.url), {}),
    ).toBeNull();
  });
});
