import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";

/**
 * The service under test in a process of its own (`shiri start --role api`), so it never shares
 * an event loop with the load generator. Loopback only; stopped by its pid.
 */
const BIN = fileURLToPath(new URL("../../bin/shiri.mjs", import.meta.url));

export interface ApiProcess {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

/** A port nobody listens on right now, on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export async function startApiProcess(opts: {
  databaseUrl: string;
  /** Extra node flags for the child, e.g. ["--cpu-prof", "--cpu-prof-dir", dir]. */
  nodeFlags?: string[];
  env?: Record<string, string>;
  readyTimeoutMs?: number;
}): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), BIN, "start", "--role", "api"], {
    env: {
      ...process.env,
      DATABASE_URL: opts.databaseUrl,
      HOST: "127.0.0.1",
      PORT: String(port),
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
  if (pid === undefined) throw new Error("could not start the api process");

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    if (!(await exited(child, 15_000))) {
      child.kill("SIGKILL");
      await exited(child, 5_000);
    }
  };

  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`api process exited with ${child.exitCode}:\n${output}`);
    try {
      // Unauthenticated on purpose: a 401 proves the HTTP stack is up without touching any data.
      const res = await fetch(`${base}/api/v1/api-tokens`, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.status === 401) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`api process not ready after ${opts.readyTimeoutMs ?? 30_000} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { base, pid, stop };
}
