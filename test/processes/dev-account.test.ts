import { execFile, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, SOURCES_BIN } from "../../bench/lib/shiri-process.ts";
import { dataFolder, heldPort, withoutDatabase } from "../support/development-start.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * The quick start's first `npm start` on the embedded Postgres creates a development account and
 * prints its key, which is shown only once. The embedded Postgres is a development install's: this
 * checkout's sources run, whatever is under test. A first start that fails (its port taken) must not
 * have created the account already, or no later start would ever print a key.
 */

let folder: ReturnType<typeof dataFolder>;
let taken: Awaited<ReturnType<typeof heldPort>>;

beforeAll(async () => {
  folder = dataFolder("dev-account");
  taken = await heldPort();
});

afterAll(async () => {
  await taken?.release();
  folder?.remove();
});

interface Started {
  output: () => string;
  exited: Promise<number | null>;
  stop: () => void;
}

function start(env: Record<string, string>): Started {
  const child = spawn(process.execPath, [SOURCES_BIN, "start"], {
    env: {
      ...withoutDatabase(),
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      START_SIMULATORS: "false",
      SHIRI_ENV: "development",
      DATA_DIR: folder.dir,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const take = (chunk: Buffer) => {
    output += chunk.toString("utf8");
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  // Never left running after the test: SIGKILL if SIGTERM has not ended it.
  const stop = () => {
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 15_000).unref();
  };
  return { output: () => output, exited, stop };
}

/** The CLI on the embedded database in the test's data folder (no DATABASE_URL). */
function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [SOURCES_BIN, ...args],
      {
        timeout: 30_000,
        killSignal: "SIGKILL",
        env: {
          ...withoutDatabase(),
          SHIRI_ENV: "development",
          LOG_LEVEL: "silent",
          DATA_DIR: folder.dir,
          ...env,
        },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

describe("the development account of the quick start", () => {
  it("is created and its key printed by the first start that succeeds, not by one that failed", async () => {
    const pgPort = String(await freePort());
    const failed = start({ PORT: String(taken.port), EMBEDDED_PG_PORT: pgPort });
    try {
      expect(await failed.exited, failed.output()).toBe(1);
    } finally {
      failed.stop();
    }
    expect(failed.output()).toContain(`PORT=${taken.port}`);
    expect(failed.output()).not.toContain("api key");

    const next = start({ PORT: "0", EMBEDDED_PG_PORT: pgPort });
    try {
      await waitFor(async () => next.output().includes("api listening"), {
        timeoutMs: 60_000,
        intervalMs: 100,
        what: "the second start to listen",
      });
      await waitFor(async () => /api key\s+: \S+/.test(next.output()), {
        timeoutMs: 5_000,
        intervalMs: 50,
        what: "the development account's key to be printed",
      });
      // The CLI finds the running server on the data folder, whatever port it is told now.
      const listed = await cli(["account", "list"], { EMBEDDED_PG_PORT: String(await freePort()) });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain("Development");
    } finally {
      next.stop();
    }
    expect(await next.exited).not.toBeNull();
  }, 120_000);
});
