import { type Pool, type Transact, withTransaction } from "../db/pool.ts";
import { type Queue, statementsOn } from "../queue/boss.ts";
import { announceWork } from "../queue/wakeups.ts";
import { WEBHOOK_QUEUE, webhookJobs } from "../queue/webhook-jobs.ts";
import { takingUpEvents } from "./events.ts";

/**
 * Transactions whose new callback events get their callback jobs in the same transaction: the
 * worker's status changes (settle, receipts, expiry), which hold a queue handle. Their events skip the
 * relay, whose claim rewrote every event row (and its index entries) once more and waited for its
 * next pass. An event, its status change and its job still commit together or not at all; events
 * recorded elsewhere (the API's) keep going through the relay.
 */
export function transactionsWithEventJobs(pool: Pool, boss: Queue, batchSize: number): Transact {
  return (fn) =>
    withTransaction(pool, async (tx) => {
      const { result, recorded } = await takingUpEvents(tx, () => fn(tx));
      if (recorded.length > 0)
        await boss.insert(
          WEBHOOK_QUEUE,
          webhookJobs(
            recorded.map((event) => ({ ...event, attempt: 0 })),
            batchSize,
          ),
          { db: statementsOn(tx) },
        );
      // Wakes an idle delivery loop at commit (see src/queue/wakeups.ts).
      if (recorded.length > 0) await announceWork(tx, [WEBHOOK_QUEUE]);
      return result;
    });
}
