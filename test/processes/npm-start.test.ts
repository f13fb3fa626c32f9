import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/shiri-process.ts";
import { alive } from "../../scripts/lib/processes.ts";
import { dataFolder, withoutDatabase } from "../support/development-start.ts";
import { waitFor } from "../support/wait-for.ts";

/** `npm start` runs the service in npm's place: stopping npm stops the service and its database. */

let folder: ReturnType<typeof dataFolder>;

beforeAll(() => {
  folder = dataFolder("npm-start");
});

afterAll(() => folder?.remove());

describe("npm start", () => {
  it("ends the service when npm itself is sent SIGTERM, as a supervisor or `timeout` does", async () => {
    const repository = fileURLToPath(new URL("../..", import.meta.url));
    const npm = spawn("npm", ["start", "--silent"], {
      cwd: repository,
      env: {
        ...withoutDatabase(),
        HOST: "127.0.0.1",
        PORT: "0",
        METRICS_PORT: "0",
        START_SIMULATORS: "false",
        LOG_LEVEL: "info",
        DATA_DIR: folder.dir,
        EMBEDDED_PG_PORT: String(await freePort()),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    npm.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    const npmExited = new Promise<void>((resolve) => npm.on("exit", () => resolve()));
    let servicePid: number | undefined;
    try {
      await waitFor(async () => output.includes('"api listening"'), {
        timeoutMs: 60_000,
        intervalMs: 100,
        what: "npm start to listen",
      });
      const line = output.split("\n").find((l) => l.includes('"api listening"')) ?? "";
      servicePid = (JSON.parse(line) as { pid: number }).pid;
      expect(servicePid).not.toBe(npm.pid);
      npm.kill("SIGTERM");
      await npmExited;
      await waitFor(async () => !alive(servicePid as number), {
        timeoutMs: 15_000,
        intervalMs: 100,
        what: "the service started by npm start to end",
      });
    } finally {
      npm.kill("SIGKILL");
      if (servicePid !== undefined && alive(servicePid)) process.kill(servicePid, "SIGKILL");
    }
  }, 120_000);
});
