import type { Pool } from "../db/pool.ts";
import type { Logger } from "../logger.ts";
import { jittered, Waker } from "../periodic.ts";
import { type DueState, QUEUE_TOPICS, queuesDue } from "./boss.ts";
import { DISPATCH_LATER_TOPIC, JOBS_OPEN_TOPIC, type WorkSignals } from "./wakeups.ts";

/**
 * The idle worker's one poll (docs/decisions/0011-idle-worker.md): every `pollMs` or so, a few
 * statements on one connection look at every source of work (the dispatch queues, the callback
 * queue, the webhook outbox), wake the loops whose source has work due (an announcement lost to
 * a reconnect, a job pg-boss put back for retry) and sleep until the next item due by the clock (a
 * scheduled send, a retry) when that comes sooner. Work enqueued for later is announced to the
 * watch, which then looks again; the loops themselves, idle, only wait to be woken. Jobs due or
 * running anywhere are told to this process's duties that matter only then (JOBS_OPEN_TOPIC).
 */
export function startDueWatch(deps: {
  pool: Pool;
  signals: WorkSignals;
  logger: Logger;
  pollMs: number;
  /** Further sources, each one statement (the webhook outbox's). */
  sources: ReadonlyArray<(pool: Pool) => Promise<DueState[]>>;
}): { stop(): Promise<void> } {
  const waker = new Waker();
  let stopped = false;
  const stopListening = deps.signals.on(DISPATCH_LATER_TOPIC, () => waker.wake());
  const sources = [queuesDue, ...deps.sources];
  const loop = (async () => {
    while (!stopped) {
      let sleepMs = jittered(deps.pollMs);
      let jobsOpen = false;
      // One after another: at most one connection, however many sources.
      for (const source of sources) {
        try {
          for (const state of await source(deps.pool)) {
            if (state.dueNow) deps.signals.wake(state.topic);
            if (state.jobsOpen) jobsOpen = true;
            if (state.nextDueMs !== null) sleepMs = Math.min(sleepMs, Math.max(0, state.nextDueMs));
          }
        } catch (err) {
          deps.logger.warn({ err }, "sources of work not looked at (tried again)");
        }
      }
      if (jobsOpen) deps.signals.wake(JOBS_OPEN_TOPIC);
      if (stopped) break;
      await waker.sleep(sleepMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      stopListening();
      waker.wake();
      await loop;
    },
  };
}

/**
 * How long a duty woken by onOpenJobs stays at its busy pace: three of the watch's polls, so it
 * stays so while the watch keeps seeing jobs open (its polls are jittered, and may fail once).
 */
export const openJobsAwakeMs = (pollMs: number): number => 3 * pollMs;

/**
 * Calls `fn` whenever jobs are open: the due watch saw jobs due or running, or new jobs were
 * announced on one of the queues. Returns an unsubscribe.
 */
export function onOpenJobs(signals: WorkSignals, fn: () => void): () => void {
  const offs = [JOBS_OPEN_TOPIC, ...QUEUE_TOPICS].map((topic) => signals.on(topic, fn));
  return () => {
    for (const off of offs) off();
  };
}
