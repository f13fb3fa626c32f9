import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import type { Pool } from "../../src/db/pool.ts";
import { cpuSeconds } from "../dispatch-lib/cpu.ts";

/**
 * CPU of the Postgres server from /proc: the postmaster and every process it forked (client
 * backends, checkpointer, WAL writer, …). Found from one of the bench's own backends, whose
 * parent is the postmaster, so it is the same for the embedded server and for DATABASE_URL's
 * (there: all of that server's processes, other databases' backends included). Null when the
 * server is not on this machine.
 */
function parentOf(pid: number): { ppid: number; comm: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? { ppid, comm } : null;
  } catch {
    return null;
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]", ""]);

/** Readings of a process tree's CPU: call sample() now and then so processes that exit mid-run still count. */
export class ServerCpu {
  /** CPU seconds per pid: at the first reading (0 for pids born after start) and the latest. */
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private started = false;

  private constructor(readonly postmaster: number) {}

  static async find(pool: Pool, databaseUrl: string): Promise<ServerCpu | null> {
    if (!LOOPBACK.has(new URL(databaseUrl).hostname)) return null;
    const { rows } = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const backend = rows[0]?.pid;
    const parent = backend === undefined ? null : parentOf(backend);
    const postmaster = parent ? parentOf(parent.ppid) : null;
    if (!parent || !postmaster || !/postgres|postmaster/.test(postmaster.comm)) return null;
    return new ServerCpu(parent.ppid);
  }

  private pids(): number[] {
    const out = [this.postmaster];
    for (const name of readdirSync("/proc")) {
      const pid = Number(name);
      if (Number.isInteger(pid) && parentOf(pid)?.ppid === this.postmaster) out.push(pid);
    }
    return out;
  }

  sample(): void {
    for (const pid of this.pids()) {
      const s = cpuSeconds(pid);
      if (s === null) continue;
      if (!this.first.has(pid)) this.first.set(pid, this.started ? 0 : s);
      this.last.set(pid, s);
    }
    this.started = true;
  }

  /** CPU seconds since the first sample, of every process or of the given ones. */
  used(only?: ReadonlySet<number>): number {
    let total = 0;
    for (const [pid, s] of this.last) {
      if (only && !only.has(pid)) continue;
      total += s - (this.first.get(pid) ?? 0);
    }
    return total;
  }
}

/**
 * The server processes that work for this run: the backends of this database other than the
 * bench's own connections, and the background processes every write goes through.
 */
export async function ownServerPids(pool: Pool): Promise<Set<number>> {
  const { rows } = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE (datname = current_database() AND application_name <> 'shiri-bench')
         OR backend_type <> 'client backend'`,
  );
  return new Set(rows.map((r) => r.pid));
}

/** The local ports of a process's TCP connections to the database's port (Linux /proc). */
export function databaseClientPorts(pid: number, dbPort: number): number[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match?.[1]) inodes.add(match[1]);
      } catch {
        // closed while listed
      }
    }
  } catch {
    return [];
  }
  const ports: number[] = [];
  for (const table of ["tcp", "tcp6"]) {
    let text = "";
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, remote, inode] = [fields[1], fields[2], fields[9]];
      if (!local || !remote || !inode || !inodes.has(inode)) continue;
      if (Number.parseInt(remote.split(":")[1] ?? "", 16) !== dbPort) continue;
      ports.push(Number.parseInt(local.split(":")[1] ?? "", 16));
    }
  }
  return ports;
}

/**
 * This database's backends by the client process at the other end of their connection (matched
 * by its TCP port), gathered over every sample() so that connections opened mid-run count too.
 * Backends of Unix-socket connections, or of a server on another machine, are not found.
 */
export class BackendsByClient {
  private readonly pids = new Map<string, Set<number>>();

  constructor(
    private readonly pool: Pool,
    private readonly databasePort: number,
    private readonly clients: ReadonlyArray<{ label: string; pid: number }>,
  ) {
    for (const { label } of clients) this.pids.set(label, new Set());
  }

  /** The backends found for the clients of this label. */
  of(label: string): ReadonlySet<number> {
    return this.pids.get(label) ?? new Set();
  }

  /** Every backend found, whatever its client. */
  all(): number[] {
    return [...this.pids.values()].flatMap((pids) => [...pids]);
  }

  async sample(): Promise<void> {
    const { rows } = await this.pool.query<{ pid: number; port: number }>(
      "SELECT pid, client_port AS port FROM pg_stat_activity WHERE datname = current_database() AND client_port > 0",
    );
    const owner = new Map<number, string>();
    for (const { label, pid } of this.clients)
      for (const port of databaseClientPorts(pid, this.databasePort)) owner.set(port, label);
    for (const { pid, port } of rows) {
      const label = owner.get(port);
      if (label) this.pids.get(label)?.add(pid);
    }
  }
}
