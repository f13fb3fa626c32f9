import { type ChildProcess, spawn } from "node:child_process";
import { freePort, shiriCommand } from "../../bench/lib/shiri-process.ts";

/** `shiri start --role api` as a process of its own, as an operator starts it, its stdout gathered. */
export interface ApiProcess {
  child: ChildProcess;
  /** Its stdout so far: its JSON log lines. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kills it outright if it is still running: for a test's `finally`. */
  kill(): void;
}

/** Starts it on the database at `url`, on `port` (a free one if not given). */
export async function startApiProcess(url: string, port?: number): Promise<ApiProcess> {
  const command = shiriCommand();
  const child = spawn(process.execPath, [command.bin, "start", "--role", "api"], {
    env: {
      ...process.env,
      ...command.env,
      DATABASE_URL: url,
      HOST: "127.0.0.1",
      PORT: String(port ?? (await freePort())),
      METRICS_PORT: String(await freePort()),
      LOG_LEVEL: "info",
      SHIRI_ENV: "test",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => output,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
