import type { Queryable } from "../db/pool.ts";

/** A message not final long after it was due, with what the database says holds it up. */
export interface StuckMessage {
  id: string;
  status: string;
  operator: string;
  received_at: Date;
  attempts: number;
  last_error: string | null;
  /** Why it has not moved, in words an operator can act on. */
  why: string;
}

interface Row {
  id: string;
  locked_until: Date | null;
  /** Held by no run: a lease kept while a late answer may come (src/lifecycle/outcomes.ts). */
  unowned: boolean;
  last_error: string | null;
  job_state: string | null;
  job_start_after: Date | null;
  job_started_on: Date | null;
  now: Date;
}

/*
 * For each listed message: its hold, and the newest unfinished dispatch job that carries it (the
 * job's data names its message ids; pg-boss's table, read here only, never written). Run for the
 * few messages an audit lists, so the look through each queue's pending jobs stays small.
 */
const HOLDS = `
  SELECT m.id, m.locked_until, m.locked_by IS NULL AS unowned, m.last_error, j.state::text AS job_state, j.start_after AS job_start_after,
         j.started_on AS job_started_on, now() AS now
    FROM messages m
    LEFT JOIN LATERAL (SELECT state, start_after, started_on FROM pgboss.job j
                        WHERE j.name = 'dispatch-' || m.operator AND j.state < 'completed'
                          AND j.data -> 'messageIds' ? m.id::text
                        ORDER BY j.created_on DESC LIMIT 1) j ON true
   WHERE m.id = ANY($1::uuid[])`;

/** Why each of these messages is stuck: its hold, its dispatch job, or the lack of one. */
export async function whyStuck(db: Queryable, messageIds: readonly string[]): Promise<Map<string, string>> {
  if (messageIds.length === 0) return new Map();
  const queue = await db.query<{ exists: boolean }>("SELECT to_regclass('pgboss.job') IS NOT NULL AS exists");
  if (!queue.rows[0]?.exists)
    return new Map(messageIds.map((id) => [id, "no dispatch queue in this database"]));
  const { rows } = await db.query<Row>(HOLDS, [messageIds]);
  return new Map(rows.map((r) => [r.id, explain(r)]));
}

function explain(r: Row): string {
  const at = (d: Date) => d.toISOString();
  const last = r.last_error ? ` (last attempt: ${r.last_error})` : "";
  if (r.locked_until && r.locked_until > r.now && r.unowned)
    return `waits until ${at(r.locked_until)} for the carrier's late answer to a submit that timed out${last}`;
  if (r.locked_until && r.locked_until > r.now)
    return `held by a dispatch batch until ${at(r.locked_until)}: a worker is submitting it, or died and its hold runs out then`;
  if (r.job_state === "active")
    return `its dispatch job is active since ${r.job_started_on ? at(r.job_started_on) : "?"}: a worker has it; a dead worker's job is run again once its heartbeat runs out`;
  if (r.job_state !== null && r.job_start_after && r.job_start_after > r.now)
    return `its dispatch job waits until ${at(r.job_start_after)}${last}`;
  if (r.job_state !== null)
    return `its dispatch job is due and no worker takes it: no worker serves its operator, or every link of its route is down or its breaker open${last}`;
  return `no dispatch job carries it: nothing will send it until it is enqueued again${last}`;
}
