import { execFileSync } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { round } from "./report.ts";
import { codeUnderTest } from "./shiri-process.ts";

/**
 * Which code was measured: the commit, whether src/ or carriers/ had uncommitted changes, and
 * whether it ran compiled or as sources.
 */
export function sourceVersion(): { commit: string; src_modified: boolean; under_test: string } {
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      encoding: "utf8",
    }).trim();
  try {
    return {
      commit: git("rev-parse", "HEAD"),
      src_modified: git("status", "--porcelain", "--", "src", "carriers") !== "",
      under_test: codeUnderTest(),
    };
  } catch {
    return { commit: "unknown", src_modified: false, under_test: codeUnderTest() };
  }
}

/** The machine, with the 1-minute load average so a noisy run can be recognised as one. */
export function machine(loadBefore: number, postgres: { version: string; source: string }) {
  return {
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? "unknown",
    memory_gb: round(os.totalmem() / 2 ** 30, 1),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    load_average_1m: { before: loadBefore, after: round(os.loadavg()[0] ?? 0, 2) },
    postgres: { ...postgres, host: "same machine (loopback)" },
  };
}

export const loadAverage = (): number => round(os.loadavg()[0] ?? 0, 2);
