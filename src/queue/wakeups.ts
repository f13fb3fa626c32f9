import { listenOn } from "../db/listener.ts";
import type { DatabaseTimeouts, Queryable } from "../db/pool.ts";
import type { Logger } from "../logger.ts";

/**
 * Work announced across processes, so an idle loop sleeps instead of polling (see
 * docs/decisions/0011-idle-worker.md). A transaction that makes work (jobs enqueued, outbox events
 * recorded) announces its topic with pg_notify, which Postgres delivers at commit: a loop woken by
 * it never runs before the work is visible. A worker holds one listening connection and wakes the
 * loops of the topic. A pg-boss queue's jobs are announced under the queue's name
 * (`dispatchQueue(operator)`, `WEBHOOK_QUEUE`); the topics below name the rest.
 */
export const WAKE_CHANNEL = "shiri_work";

/** The topic of jobs and events due later (scheduled sends, retries): the due watch looks again. */
export const DISPATCH_LATER_TOPIC = "due-later";

/** The topic of receipts kept early (before their segments were recorded). */
export const EARLY_RECEIPTS_TOPIC = "early-receipts";

/** The topic of the webhook outbox's events left to the relay (the API's, mostly). */
export const OUTBOX_TOPIC = "webhook-outbox";

/**
 * The topic of numbers just put on an opt-out list: each dispatch batch in flight asks at once
 * which of its messages that stops (src/dispatch/batch-lease.ts).
 */
export const OPT_OUTS_TOPIC = "opt-outs";

/**
 * Within a process only, never announced: the due watch saw queue jobs due or running (in any
 * process). What keeps the duties that matter only while work is open at their busy pace: pg-boss
 * supervision, the validity sweep (src/queue/due-watch.ts, onOpenJobs).
 */
export const JOBS_OPEN_TOPIC = "jobs-open";

/** Within a process only: a link took a mobile-originated part (the inbound upkeep stays awake). */
export const INBOUND_TOPIC = "inbound-parts";

/**
 * A process announces a topic at most this often. Every NOTIFY takes a database-wide lock from
 * its transaction's commit until the commit is flushed, so notifying transactions commit one
 * after another: announcing each send would serialise the busy path's commits. A loop woken by an
 * announcement stays awake (polling) for at least `AWAKE_AFTER_WORK_MS` after its last work, so
 * what commits within this window of an announcement is found by those polls.
 */
export const ANNOUNCE_EVERY_MS = 100;

/** How long a loop keeps polling after its last work before it sleeps until woken. */
export const AWAKE_AFTER_WORK_MS = 3 * ANNOUNCE_EVERY_MS;

/**
 * An idle loop looks by itself after this many idle polls (IDLE_POLL_MS) should the due watch
 * (src/queue/due-watch.ts), which wakes it whenever its source has work, be stuck.
 */
export const IDLE_BACKSTOP_POLLS = 12;

/**
 * With nothing open, a duty that only tidies after work (the early-receipt sweep, the validity
 * sweep, inbound upkeep) runs every this many idle polls (IDLE_POLL_MS) instead of its own pace.
 */
export const IDLE_DUTY_POLLS = 6;

const announced = new Map<string, number>();

/**
 * Announces work on the topics in the caller's transaction (delivered at its commit), unless this
 * process announced the topic within ANNOUNCE_EVERY_MS: then the loop that woke is still awake.
 */
export async function announceWork(tx: Queryable, topics: readonly string[]): Promise<void> {
  const now = Date.now();
  const due = topics.filter(
    (topic) => now - (announced.get(topic) ?? Number.NEGATIVE_INFINITY) >= ANNOUNCE_EVERY_MS,
  );
  if (due.length === 0) return;
  for (const topic of due) announced.set(topic, now);
  await tx.query({
    name: "shiri_announce_work",
    text: "SELECT pg_notify($1, topic) FROM unnest($2::text[]) AS topic",
    values: [WAKE_CHANNEL, due],
  });
}

/**
 * Forgets when topics were last announced: called after a transaction that may have announced
 * rolled back (its NOTIFY went nowhere), so the next commit announces again instead of relying on
 * a loop that nothing woke.
 */
export function announcementsLost(): void {
  announced.clear();
}

/** Who wants to hear of a topic's work, and a process's own way to say there is some. */
export interface WorkSignals {
  /** Calls `wake` on every announcement of the topic, and after the listener reconnects; returns an unsubscribe. */
  on(topic: string, wake: () => void): () => void;
  /** Wakes this process's loops of the topic (no announcement to others). */
  wake(topic: string): void;
}

/** Signals within this process only: what a process without a listener has (the API, tests). */
export function localSignals(): WorkSignals & { wakeAll(): void } {
  const listeners = new Map<string, Set<() => void>>();
  const wake = (topic: string) => {
    for (const fn of listeners.get(topic) ?? []) fn();
  };
  return {
    on(topic, fn) {
      const set = listeners.get(topic) ?? new Set();
      set.add(fn);
      listeners.set(topic, set);
      return () => set.delete(fn);
    },
    wake,
    wakeAll() {
      for (const topic of listeners.keys()) wake(topic);
    },
  };
}

/**
 * The worker's one listening connection (src/db/listener.ts). Each time it is listening — the
 * first time and after every reconnect — each loop is woken once, for what was announced while
 * nobody listened.
 */
export async function listenForWork(
  connectionString: string,
  timeouts: DatabaseTimeouts | undefined,
  logger: Logger,
): Promise<WorkSignals & { stop(): Promise<void> }> {
  const signals = localSignals();
  let connections = 0;
  const listening = await listenOn(connectionString, timeouts, WAKE_CHANNEL, {
    onNotify: signals.wake,
    onListening: () => {
      if (connections++ > 0) logger.info("listening for work again: every loop looks once");
      signals.wakeAll();
    },
    onError: (err) => logger.warn({ err }, "listening connection lost: reconnecting"),
  });
  return { on: signals.on, wake: signals.wake, stop: () => listening.stop() };
}
