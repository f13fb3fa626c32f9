import { readFileSync } from "node:fs";
import type { Pool } from "../../src/db/pool.ts";

/** Clock ticks per second of /proc's utime and stime (USER_HZ; 100 on every Linux we run on). */
const TICKS = 100;

/** CPU seconds (user + system) a process has used so far; null off Linux or when it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces: fields count from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / TICKS : null;
  } catch {
    return null;
  }
}

/**
 * CPU seconds used so far by the Postgres backends serving the service on this database
 * (application_name "shiri", "shiri-queue" and "shiri-listener"), when the server runs on this machine.
 */
export async function backendCpu(pool: Pool): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND application_name IN ('shiri', 'shiri-queue', 'shiri-listener')`,
  );
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const s = cpuSeconds(pid);
    if (s !== null) out.set(pid, s);
  }
  return out;
}

/** Seconds used between two readings of backendCpu (backends that appeared count from zero). */
export function backendCpuUsed(before: Map<number, number>, after: Map<number, number>): number | null {
  if (after.size === 0) return null;
  let total = 0;
  for (const [pid, s] of after) total += s - (before.get(pid) ?? 0);
  return total;
}
