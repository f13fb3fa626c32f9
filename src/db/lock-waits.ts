import type { Logger } from "../logger.ts";
import { type Queryable, sqlState } from "./pool.ts";

/** A session that holds what another waits for, as pg_stat_activity shows it. */
export interface Blocker {
  pid: number;
  application: string;
  state: string | null;
  /** Seconds since its transaction began (null outside a transaction). */
  transaction_seconds: number | null;
  /** Its current or last statement, cut short (statements carry $n parameters, never values). */
  query: string;
}

export interface LockWait {
  /** What the waiting session asks for: the lock's mode and what it is on. */
  mode: string | null;
  on: string | null;
  blockers: Blocker[];
}

/**
 * What a session waits for right now, read from another connection: the lock it asked for and
 * the sessions holding it up; null when it waits for no lock.
 */
export async function lockWaitOf(db: Queryable, pid: number): Promise<LockWait | null> {
  const { rows } = await db.query<{
    mode: string | null;
    on: string | null;
    blockers: Blocker[] | null;
  }>(
    `SELECT l.mode,
            COALESCE(l.relation::regclass::text, l.locktype) AS on,
            (SELECT json_agg(json_build_object(
                      'pid', b.pid, 'application', b.application_name, 'state', b.state,
                      'transaction_seconds', round(extract(epoch FROM now() - b.xact_start)::numeric, 1),
                      'query', left(b.query, 200)) ORDER BY b.pid)
               FROM pg_stat_activity b WHERE b.pid = ANY (pg_blocking_pids(a.pid))) AS blockers
       FROM pg_stat_activity a
       LEFT JOIN LATERAL (SELECT * FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted LIMIT 1) l ON true
      WHERE a.pid = $1 AND a.wait_event_type = 'Lock'`,
    [pid],
  );
  const row = rows[0];
  if (!row) return null;
  return { mode: row.mode, on: row.on, blockers: row.blockers ?? [] };
}

/**
 * Runs `work` on the session `pid` while another connection looks, every `everyMs`, at what that session
 * waits for, and logs each new set of blockers once: a migration stuck behind a long transaction
 * says which one, while it waits, not only after.
 */
export async function reportingLockWaits<T>(
  pid: number,
  observer: Queryable,
  opts: { everyMs: number; logger: Logger | undefined; context: Record<string, unknown> },
  work: () => Promise<T>,
): Promise<T> {
  const { logger } = opts;
  if (!logger) return work();
  let told = "";
  let looking = false;
  const timer = setInterval(() => {
    if (looking) return;
    looking = true;
    lockWaitOf(observer, pid)
      .then((wait) => {
        const key = wait ? `${wait.mode} ${wait.on} ${wait.blockers.map((b) => b.pid).join(",")}` : "";
        if (wait && key !== told)
          logger.warn({ ...opts.context, waiting_for: wait }, "migration waits for a lock");
        told = key;
      })
      .catch(() => {})
      .finally(() => {
        looking = false;
      });
  }, opts.everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** A lock not granted within lock_timeout, or a deadlock broken by Postgres: worth another try. */
export function isLockRefusal(err: unknown): boolean {
  const state = sqlState(err);
  return state === "55P03" || state === "40P01";
}

/** The wait before attempt `attempt` (2, 3, …): doubling from 1 s, at most 30 s, with jitter. */
export function lockRetryDelayMs(attempt: number, random = Math.random): number {
  const ceiling = Math.min(30_000, 1_000 * 2 ** (attempt - 2));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
