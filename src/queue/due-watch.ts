import type { Pool } from "../db/pool.ts";
import type { Logger } from "../logger.ts";
import { jittered, Waker } from "../periodic.ts";
import { type DueState, queuesDue } from "./boss.ts";
import { DISPATCH_LATER_TOPIC, type WorkSignals } from "./wakeups.ts";

/**
 * The idle worker's one poll (docs/decisions/0011-idle-worker.md): every `pollMs` or so, a few
 * statements on one connection look at every source of work (the dispatch queues, the callback
 * queue, the webhook outbox), wake the loops whose source has work due (an announcement lost to
 * a reconnect, a job pg-boss put back for retry) and sleep until the next item due by the clock (a
 * scheduled send, a retry) when that comes sooner. Work enqueued for later is announced to the
 * watch, which then looks again; the loops themselves, idle, only wait to be woken.
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
      // One after another: at most one connection, however many sources.
      for (const source of sources) {
        try {
          for (const state of await source(deps.pool)) {
            if (state.dueNow) deps.signals.wake(state.topic);
            if (state.nextDueMs !== null) sleepMs = Math.min(sleepMs, Math.max(0, state.nextDueMs));
          }
        } catch (err) {
          deps.logger.warn({ err }, "sources of work not looked at (tried again)");
        }
      }
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
