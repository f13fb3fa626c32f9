/**
 * Child processes for the dashboard check: loopback ports, spawning with output captured to a
 * log file, and stopping each by its pid (SIGTERM, then SIGKILL after a grace period).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";

/** Distinct free loopback ports, all held open together so none is handed out twice. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<import("node:net").Server>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    return typeof address === "object" && address ? address.port : 0;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  logPath: string;
  exited: Promise<number | null>;
  /** Set once the process has exited. */
  exitCode(): number | null | undefined;
  /** Resolves with the first match of pattern in stdout, or rejects when the process exits first. */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
}

export function startChild(
  name: string,
  command: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; logPath: string },
): Child {
  const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  const log = createWriteStream(opts.logPath);
  let stdout = "";
  let code: number | null | undefined;
  const waiters = new Set<() => void>();
  child.stdout?.on("data", (chunk: Buffer) => {
    log.write(chunk);
    // Kept only until what callers wait for has appeared; bounded either way.
    if (stdout.length < 1_000_000) stdout += chunk.toString("utf8");
    for (const wake of waiters) wake();
  });
  child.stderr?.on("data", (chunk: Buffer) => log.write(chunk));
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (c, signal) => {
      code = c ?? (signal ? null : c);
      log.end();
      for (const wake of waiters) wake();
      resolve(code);
    });
  });
  return {
    name,
    process: child,
    pid: child.pid,
    logPath: opts.logPath,
    exited,
    exitCode: () => code,
    waitForOutput(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${name}: no ${pattern} in its output after ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          const match = stdout.match(pattern);
          if (match) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(match);
          } else if (code !== undefined) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`${name} exited (code ${code}) before printing ${pattern}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Whether a process with this pid is running (signal 0 tests it without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True once the process is gone: by its exit event when it is our child, else by polling its pid. */
async function waitUntilGone(pid: number, ms: number, exited?: Promise<unknown>): Promise<boolean> {
  if (exited) return Promise.race([exited.then(() => true), sleep(ms).then(() => false)]);
  const deadline = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
  return true;
}

/** SIGTERM, then SIGKILL when it has not exited within graceMs. */
export async function stopChild(child: Child, graceMs: number): Promise<void> {
  if (child.exitCode() !== undefined) return;
  try {
    process.kill(child.pid, "SIGTERM");
  } catch {
    return;
  }
  if (await waitUntilGone(child.pid, graceMs, child.exited)) return;
  process.stderr.write(`${child.name} (pid ${child.pid}) ignored SIGTERM for ${graceMs} ms: SIGKILL\n`);
  try {
    process.kill(child.pid, "SIGKILL");
  } catch {}
  await waitUntilGone(child.pid, 5_000, child.exited);
}

/**
 * The embedded Postgres a killed service leaves behind: its postmaster pid is in postmaster.pid.
 * SIGINT is Postgres's fast shutdown; SIGKILL if it does not go.
 */
export async function stopOrphanPostgres(pgDataDir: string): Promise<void> {
  const pidFile = `${pgDataDir}/postmaster.pid`;
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt(readFileSync(pidFile, "utf8").split("\n")[0] ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  process.stderr.write(`embedded postgres (pid ${pid}) outlived the service: stopping it\n`);
  try {
    process.kill(pid, "SIGINT");
  } catch {}
  if (await waitUntilGone(pid, 10_000)) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {}
  await waitUntilGone(pid, 5_000);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until check returns a value (not undefined), or throws with what was last seen. */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined>,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last: ${String(last)})` : ""}`,
  );
}

/** The last lines of a child's log, for a failure report. */
export function logTail(path: string, lines = 30): string {
  if (!existsSync(path)) return "";
  return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}
