import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The service under test in a process of its own (`shiri start --role …`), so it never shares
 * an event loop with the load generator or the simulators. Loopback only; stopped by its pid.
 */
/** This checkout's `shiri`, run from its sources: the development install, simulators and all. */
export const SOURCES_BIN = fileURLToPath(new URL("../../bin/shiri.mjs", import.meta.url));

const REPOSITORY = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The `shiri` command under test. By default this checkout's sources (through tsx). With
 * SHIRI_UNDER_TEST set to a directory laid out as the image is (bin/, dist/, production
 * node_modules: scripts/production-tree.sh makes one), that directory's compiled code, run as
 * the image runs it (NODE_ENV=production); SHIRI_UNDER_TEST=. is this checkout's own dist/.
 */
export function shiriCommand(): { bin: string; env: Record<string, string> } {
  const app = process.env.SHIRI_UNDER_TEST;
  if (!app || app === "sources") return { bin: SOURCES_BIN, env: {} };
  const root = path.resolve(app);
  if (!existsSync(path.join(root, "dist", "src", "cli", "main.js")))
    throw new Error(`SHIRI_UNDER_TEST=${app}: no dist/src/cli/main.js there (run npm run build)`);
  return { bin: path.join(root, "bin", "shiri.mjs"), env: { NODE_ENV: "production" } };
}

/**
 * The benches measure what production runs: this checkout compiled (`npm run build`, a few
 * seconds, into dist/) and run as the image runs it, not the sources through tsx, which cost a
 * little CPU of their own (docs/decisions/0023-production-runs-compiled-code.md).
 * SHIRI_UNDER_TEST set to a tree measures that tree; SHIRI_UNDER_TEST=sources measures the
 * sources through tsx.
 */
export function measureCompiledUnlessTold(): void {
  if (process.env.SHIRI_UNDER_TEST) return;
  buildTree(REPOSITORY);
  process.env.SHIRI_UNDER_TEST = REPOSITORY;
}

/** `npm run build` in a checkout of Shiri: its dist/, which SHIRI_UNDER_TEST=<tree> measures. */
export function buildTree(tree: string): void {
  const build = spawnSync("npm", ["run", "--silent", "build"], {
    cwd: tree,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (build.status !== 0)
    throw new Error(`npm run build in ${tree} failed (exit ${build.status ?? build.signal})`);
}

/**
 * The migrations of the tree under test, when it is another tree than this checkout: a bench
 * measures that tree's schema with its code (its dist/ holds its migrations). This checkout's own
 * otherwise (undefined: the shipped ones).
 */
export function migrationsUnderTest(): string | undefined {
  const told = process.env.SHIRI_UNDER_TEST;
  if (!told || told === "sources" || path.resolve(told) === path.resolve(REPOSITORY)) return undefined;
  return path.join(path.resolve(told), "dist", "src", "db", "migrations");
}

/** What shiriCommand runs, in words, for the results. */
export function codeUnderTest(): string {
  const told = process.env.SHIRI_UNDER_TEST;
  if (!told || told === "sources") return "sources, through tsx";
  if (told === REPOSITORY) return "this checkout, compiled (npm run build), NODE_ENV=production";
  return `the compiled tree at ${told}, NODE_ENV=production`;
}

export interface ShiriProcess {
  pid: number;
  /** The API's base URL (role api or all). */
  base: string;
  metricsPort: number;
  /** The last few kilobytes the process wrote, for error reports. */
  output(): string;
  exited(): boolean;
  /** SIGTERM (in-flight work finishes, sessions unbind), then SIGKILL if it lingers. */
  stop(): Promise<void>;
}

/*
 * Ports are handed out below the kernel's ephemeral range (32768 and up on Linux, 49152 and up
 * elsewhere): a port taken from that range (listen on 0) can become the local port of any outgoing
 * connection, a database client's say, between the check and the listen of the process it is meant
 * for, which then fails with EADDRINUSE.
 */
const PORTS_FROM = 20_000;
const PORTS_TO = 32_000;

/** A port nobody listens on right now, on loopback, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = PORTS_FROM + Math.floor(Math.random() * (PORTS_TO - PORTS_FROM));
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
    if (free) return port;
    if (tries === 100) throw new Error(`no free port between ${PORTS_FROM} and ${PORTS_TO}`);
  }
}

/** Whether the child exited within timeoutMs. */
export function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM, then SIGKILL if the child lingers past graceMs; resolves once it exited (or 5 s after the SIGKILL). */
export async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  if (!(await waitExit(child, graceMs))) {
    child.kill("SIGKILL");
    await waitExit(child, 5_000);
  }
}

/** Answers once the process serves what its role is for. */
async function ready(role: "api" | "worker" | "all", base: string, metricsPort: number): Promise<boolean> {
  try {
    // api: an unauthenticated 401 proves the HTTP stack is up without touching any data.
    // worker: its metrics endpoint answers once the queue is started; dispatch starts right after.
    const http = role !== "worker";
    const url = http ? `${base}/api/v1/api-tokens` : `http://127.0.0.1:${metricsPort}/metrics`;
    const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return http ? res.status === 401 : res.ok;
  } catch {
    return false;
  }
}

/** BENCH_SHIRI_NODE_FLAGS: node and V8 flags for Shiri's processes alone, e.g. "--max-semi-space-size=32". */
function extraNodeFlags(): string[] {
  return (process.env.BENCH_SHIRI_NODE_FLAGS ?? "").split(/\s+/).filter((flag) => flag !== "");
}

/**
 * BENCH_SHIRI_NODE: the node binary Shiri's processes run on (the bench's own node by default), so
 * Shiri can be measured on the Node.js the image runs (scripts/with-node.sh caches one) while the
 * load and the sink stay where they are.
 */
function shiriNode(): string {
  return process.env.BENCH_SHIRI_NODE || process.execPath;
}

export interface ShiriProcessOptions {
  role: "api" | "worker" | "all";
  databaseUrl: string;
  env?: Record<string, string>;
  /** Extra node flags, e.g. ["--cpu-prof", "--cpu-prof-dir", dir]. */
  nodeFlags?: string[];
  readyTimeoutMs?: number;
}

class PortTakenError extends Error {}

/**
 * Starts the process on two free ports; if another process took one of them before it listened
 * (tests start processes side by side), it starts again on new ones.
 */
export async function startShiriProcess(opts: ShiriProcessOptions): Promise<ShiriProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePorts(opts);
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt === 3) throw err;
    }
  }
}

/**
 * Starts the processes side by side, in the order given; if one fails to start, stops those that
 * did and throws its error, so no process is left behind.
 */
export async function startShiriProcesses(all: readonly ShiriProcessOptions[]): Promise<ShiriProcess[]> {
  const started = await Promise.allSettled(all.map((opts) => startShiriProcess(opts)));
  const running = started.flatMap((p) => (p.status === "fulfilled" ? [p.value] : []));
  const failed = started.find((p) => p.status === "rejected");
  if (!failed) return running;
  for (const p of running) await p.stop();
  throw failed.reason;
}

async function startOnFreePorts(opts: ShiriProcessOptions): Promise<ShiriProcess> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const shiri = shiriCommand();
  const child = spawn(
    shiriNode(),
    [...extraNodeFlags(), ...(opts.nodeFlags ?? []), shiri.bin, "start", "--role", opts.role],
    {
      env: {
        ...process.env,
        ...shiri.env,
        DATABASE_URL: opts.databaseUrl,
        HOST: "127.0.0.1",
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        LOG_LEVEL: "warn",
        START_SIMULATORS: "false",
        // Against the carrier simulators, with their passwords: production would refuse them.
        SHIRI_ENV: "test",
        // One client address (loopback) for every test and load: no failed-authentication limit.
        AUTH_FAILURES_PER_MINUTE: "0",
        ...opts.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the ${opts.role} process`);

  const stop = () => stopChild(child, 20_000);

  const base = `http://127.0.0.1:${port}`;
  const timeoutMs = opts.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  while (!(await ready(opts.role, base, metricsPort))) {
    if (child.exitCode !== null) {
      const message = `${opts.role} process exited with ${child.exitCode}:\n${output}`;
      throw output.includes("EADDRINUSE") ? new PortTakenError(message) : new Error(message);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${opts.role} process not ready after ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    pid,
    base,
    metricsPort,
    output: () => output,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    stop,
  };
}
