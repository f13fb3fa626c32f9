import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "../lib/api-process.ts";

/**
 * One dispatch worker in a process of its own (`shiri start --role worker`), pointed at a
 * database and at carrier simulators the bench runs itself. Loopback only; stopped by its pid.
 */
const BIN = fileURLToPath(new URL("../../bin/shiri.mjs", import.meta.url));

export interface WorkerProcess {
  pid: number;
  metricsPort: number;
  /** The last few kilobytes the process wrote, for error reports. */
  output(): string;
  exited(): boolean;
  stop(): Promise<void>;
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export async function startWorkerProcess(opts: {
  databaseUrl: string;
  env: Record<string, string>;
  /** Extra node flags, e.g. ["--cpu-prof", "--cpu-prof-dir", dir]. */
  nodeFlags?: string[];
  readyTimeoutMs?: number;
}): Promise<WorkerProcess> {
  const metricsPort = await freePort();
  const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), BIN, "start", "--role", "worker"], {
    env: {
      ...process.env,
      DATABASE_URL: opts.databaseUrl,
      HOST: "127.0.0.1",
      PORT: "0",
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: "warn",
      START_SIMULATORS: "false",
      ...opts.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not start the worker process");

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // SIGTERM: the worker finishes its jobs in flight, unbinds and releases its bind slots.
    child.kill("SIGTERM");
    if (!(await waitExit(child, 20_000))) {
      child.kill("SIGKILL");
      await waitExit(child, 5_000);
    }
  };

  // Ready once its metrics endpoint answers: the queue is started and dispatch starts right after.
  const timeoutMs = opts.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`worker process exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, {
        signal: AbortSignal.timeout(1_000),
      });
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`worker process not ready after ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    pid,
    metricsPort,
    output: () => output,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    stop,
  };
}
