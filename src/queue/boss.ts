import { createHash } from "node:crypto";
import { PgBoss } from "pg-boss";
import { OPERATORS, type Operator } from "../../carriers/index.ts";
import { connectionOptions, type DatabaseTimeouts, type Queryable } from "../db/pool.ts";
import type { Logger } from "../logger.ts";
import { paced } from "../periodic.ts";
import { announceWork, DISPATCH_LATER_TOPIC } from "./wakeups.ts";
import { WEBHOOK_QUEUE, WEBHOOK_QUEUE_OPTIONS } from "./webhook-jobs.ts";

/** One dispatch queue per operator, so a stalled carrier never holds up another. */
export const dispatchQueue = (operator: Operator): string => `dispatch-${operator}`;

/** A dispatch job names the messages it carries; their content stays in the messages table. */
export interface DispatchJob {
  messageIds: string[];
}

export interface QueueOptions {
  max?: number;
  /**
   * How often, at most, a supervision pass (superviseQueues) expires and retries the jobs whose
   * worker died: pg-boss's claim on each queue's monitoring lasts this long.
   */
  superviseIntervalSeconds?: number;
  /** A dispatch job still active after this long is failed and run again, however it is touched. */
  dispatchJobExpireSeconds?: number;
  /** A dispatch job not touched for this long lost its worker: failed and run again (at least 10). */
  dispatchJobHeartbeatSeconds?: number;
  /** The same per-connection limits as the service's own pool. */
  timeouts?: DatabaseTimeouts;
  /**
   * The service's pool, for pg-boss to run on instead of a pool of its own: an idle process then
   * keeps one connection warm, not one per pool (docs/decisions/0011-idle-worker.md).
   */
  pool?: Queryable;
}

export async function startQueue(
  connectionString: string,
  logger: Logger,
  opts: QueueOptions,
): Promise<PgBoss> {
  const pool = opts.pool;
  const boss = new PgBoss({
    ...(pool
      ? { db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values) } }
      : { connectionString, max: opts.max ?? 4 }),
    // pg-boss's own supervisor runs on a fixed timer, work or not: superviseQueues runs its passes
    // instead, at that pace only while jobs are open (docs/decisions/0011-idle-worker.md).
    supervise: false,
    superviseIntervalSeconds: opts.superviseIntervalSeconds ?? 60,
    // Job expiry runs in the monitor pass, so it must come round as often as supervision.
    monitorIntervalSeconds: opts.superviseIntervalSeconds ?? 60,
    schedule: false,
    // Flows are not used: their poll (every 5 s by default) would only cost an idle worker.
    flowIntervalSeconds: 3_600,
    application_name: "shiri-queue",
    ...(opts.timeouts ? connectionOptions(opts.timeouts) : {}),
  });
  boss.on("error", (err) => logger.error({ err }, "queue error"));
  await boss.start();
  // Retries are decided per message by dispatch; a job retry only covers a crashed worker.
  const dispatchOptions = {
    retryLimit: 1000,
    retryDelay: 1,
    retryBackoff: true,
    retryDelayMax: 60,
    expireInSeconds: opts.dispatchJobExpireSeconds ?? 3_600,
    // A worker's death shows as its batches no longer touching their jobs (touchDispatchJobs),
    // found within the supervision interval after this, not after the long expiry.
    heartbeatSeconds: opts.dispatchJobHeartbeatSeconds ?? 10,
    // A completed dispatch job says nothing the messages table does not: kept an hour, not
    // pg-boss's default week, so the queue's table stays the size of the work in flight.
    deleteAfterSeconds: 3_600,
  };
  for (const operator of OPERATORS) {
    const name = dispatchQueue(operator);
    if (await boss.getQueue(name)) await boss.updateQueue(name, dispatchOptions);
    else await boss.createQueue(name, dispatchOptions);
  }
  if (await boss.getQueue(WEBHOOK_QUEUE)) await boss.updateQueue(WEBHOOK_QUEUE, WEBHOOK_QUEUE_OPTIONS);
  else await boss.createQueue(WEBHOOK_QUEUE, WEBHOOK_QUEUE_OPTIONS);
  return boss;
}

/** Supervision's pace with no job open: what is left to do then (deleting old jobs) can wait. */
export const IDLE_SUPERVISE_MS = 60_000;

/**
 * pg-boss's supervision (jobs past their expiry or heartbeat failed and retried, old jobs deleted)
 * run by this process: every `superviseMs` while jobs are open (keepAwake(), called when the due
 * watch sees jobs due or running, and on every announcement of new ones; it stays awake for
 * `awakeMs`), else every IDLE_SUPERVISE_MS. pg-boss's own timer ran a pass of 6 to 9 statements
 * every interval, work or not, the largest of an idle worker's duties. A dead worker's jobs are
 * running jobs: the due watch of every live worker sees them, so they are supervised at the full
 * pace until they are retried. Passes of several processes share pg-boss's claims (one pass per
 * queue per interval, whoever runs it).
 */
export function superviseQueues(
  queue: Queue,
  opts: { superviseMs: number; awakeMs: number; logger: Logger },
): { keepAwake(): void; stop(): Promise<void> } {
  return paced(
    {
      busyMs: opts.superviseMs,
      idleMs: Math.max(opts.superviseMs, IDLE_SUPERVISE_MS),
      awakeMs: opts.awakeMs,
    },
    async () => {
      await queue.supervise();
      return false;
    },
    (err) => opts.logger.error({ err }, "queue supervision failed"),
  );
}

/**
 * Enqueues dispatch jobs inside the caller's transaction, so the messages, their charge and
 * their jobs commit together or not at all. Message ids are grouped per operator in batches.
 * `startAfter`: seconds from now, or the instant the jobs become due (a scheduled send's
 * send_at); until then no fetch takes them.
 */
export async function enqueueDispatch(
  boss: PgBoss,
  tx: Queryable,
  messages: ReadonlyArray<{ id: string; operator: Operator }>,
  batchSize: number,
  startAfter: number | Date = 0,
): Promise<void> {
  // A size below 1 (or NaN) would never advance the loop below: it grew the heap until the process
  // died, the event loop blocked for every client. The configuration refuses it; this is the backstop.
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError(`dispatch batch size must be a whole number of at least 1, got ${batchSize}`);
  const byOperator = new Map<Operator, string[]>();
  for (const m of messages) {
    const ids = byOperator.get(m.operator) ?? [];
    ids.push(m.id);
    byOperator.set(m.operator, ids);
  }
  const db = statementsOn(tx);
  for (const [operator, ids] of byOperator) {
    const jobs: { data: DispatchJob; startAfter?: number | string }[] = [];
    // An instant goes as RFC 3339 in UTC, which pg-boss reads as a timestamp (not as seconds).
    const start = startAfter instanceof Date ? startAfter.toISOString() : startAfter > 0 ? startAfter : null;
    for (let i = 0; i < ids.length; i += batchSize) {
      const data = { messageIds: ids.slice(i, i + batchSize) };
      jobs.push(start === null ? { data } : { data, startAfter: start });
    }
    await boss.insert(dispatchQueue(operator), jobs, { db });
  }
  // Wakes an idle worker's dispatcher at commit; for a job due later, the watch that sets the
  // timer of the next job due (src/queue/due-watch.ts).
  const dueNow = startAfter instanceof Date ? startAfter.getTime() <= Date.now() : startAfter <= 0;
  await announceWork(tx, dueNow ? [...byOperator.keys()].map(dispatchQueue) : [DISPATCH_LATER_TOPIC]);
}

/**
 * pg-boss calls given this run on `db` (the caller's transaction, or the service's pool) as named
 * statements. pg-boss's statements are few and fixed (one insert or fetch text per queue): named,
 * each is parsed once per connection and soon runs on a generic plan, instead of being planned on
 * every call (its group fetch cost 0.35 ms of planning for 0.1 ms of work).
 */
export function statementsOn(db: Queryable) {
  return {
    executeSql: (text: string, values?: unknown[]) => db.query({ name: statementName(text), text, values }),
  };
}

const statementNames = new Map<string, string>();
/** Beyond this many distinct texts (some embed a count), statements go unnamed: bounded memory. */
const MAX_NAMED_STATEMENTS = 500;
function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (!name && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `pgboss_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** The queue as the rest of Shiri sees it: pg-boss stays behind this module. */
export type Queue = PgBoss;
export type { Job } from "pg-boss";

/** A dispatch job as fetched: its completion is fenced to this attempt (retryCount). */
export interface FetchedJob {
  id: string;
  data: unknown;
  retryCount: number;
}

const fence = (jobs: readonly FetchedJob[]) => jobs.map((j) => ({ id: j.id, retryCount: j.retryCount }));

/** Takes up to `count` of the operator's due dispatch jobs (one statement, SKIP LOCKED). */
export function fetchDispatchJobs(
  queue: Queue,
  db: Queryable,
  operator: Operator,
  count: number,
): Promise<FetchedJob[]> {
  return queue.fetch(dispatchQueue(operator), { batchSize: count, db: statementsOn(db) });
}

/** Where a source of work stands: due now, and in how many ms its next item comes due (null: none). */
export interface DueState {
  topic: string;
  dueNow: boolean;
  nextDueMs: number | null;
  /** A queue's: jobs due or running (in any process), which supervision must watch over. */
  jobsOpen?: boolean;
}

/** The queues Shiri runs: one per operator's dispatch, and the callbacks'. Each name is its topic. */
export const QUEUE_TOPICS: readonly string[] = [...OPERATORS.map(dispatchQueue), WEBHOOK_QUEUE];

/**
 * The dispatch queues and the webhook delivery queue as they stand, in one statement: whether
 * jobs are due now, when the next job not yet due (a scheduled send, a retry in back-off) comes
 * due, and whether any is running. What an idle worker polls instead of fetching from each queue.
 */
export async function queuesDue(db: Queryable): Promise<DueState[]> {
  const { rows } = await db.query<{
    name: string;
    due_now: boolean;
    next_ms: number | null;
    active: boolean;
  }>({
    name: "shiri_queues_due_active",
    text: `SELECT name, bool_or(state <> 'active' AND start_after <= now()) AS due_now,
                  (extract(epoch FROM min(start_after) FILTER (WHERE state <> 'active' AND start_after > now()) - now()) * 1000)::float8 AS next_ms,
                  bool_or(state = 'active') AS active
             FROM pgboss.job WHERE name = ANY($1) AND state IN ('created', 'retry', 'active') GROUP BY name`,
    values: [QUEUE_TOPICS],
  });
  // A queue's name is its topic (src/queue/wakeups.ts).
  return rows.map((r) => ({
    topic: r.name,
    dueNow: r.due_now,
    nextDueMs: r.next_ms,
    jobsOpen: r.due_now || r.active,
  }));
}

/** Completes the jobs in the caller's transaction, in one statement. */
export async function completeDispatchJobs(
  queue: Queue,
  tx: Queryable,
  operator: Operator,
  jobs: readonly FetchedJob[],
): Promise<void> {
  if (jobs.length > 0)
    await queue.complete(dispatchQueue(operator), fence(jobs), null, { db: statementsOn(tx) });
}

/** Tells pg-boss the batch running these jobs is alive (their heartbeat), in one statement. */
export async function touchDispatchJobs(
  queue: Queue,
  db: Queryable,
  operator: Operator,
  jobs: readonly FetchedJob[],
): Promise<void> {
  if (jobs.length > 0) await queue.touch(dispatchQueue(operator), fence(jobs), { db: statementsOn(db) });
}

/** Fails the jobs: pg-boss runs them again after its retry delay. */
export async function failDispatchJobs(
  queue: Queue,
  operator: Operator,
  jobs: readonly FetchedJob[],
  error: string,
): Promise<void> {
  if (jobs.length > 0) await queue.fail(dispatchQueue(operator), fence(jobs), { error });
}

/** Cancels jobs that could never run (malformed). */
export async function cancelDispatchJobs(
  queue: Queue,
  operator: Operator,
  jobs: readonly FetchedJob[],
): Promise<void> {
  if (jobs.length > 0)
    await queue.cancel(
      dispatchQueue(operator),
      jobs.map((j) => j.id),
    );
}
