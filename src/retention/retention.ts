import { type Pool, type Queryable, withTransaction } from "../db/pool.ts";
import { deleteExpiredKeys } from "../intake/idempotency.ts";
import { every } from "../periodic.ts";
import { deleteSettledEvents } from "../webhooks/retention.ts";
import {
  deleteEmptyBulkSends,
  deleteOldInboundMessages,
  deleteOldMessages,
  deleteOldMobileOriginated,
} from "./messages.ts";

/** Any constant works; it only has to be the same in every process. */
const RETENTION_LOCK = 7_426_004;

export interface RetentionPolicy {
  /** Final messages, their parts, emptied bulk sends, mobile-originated PDUs and inbound messages. */
  messageDays: number;
  /** Delivered and failed callback events. */
  webhookEventDays: number;
  /** Idempotency keys. */
  idempotencyHours: number;
  /** Rows one transaction deletes at most: short transactions, short locks. */
  chunk: number;
  /** Rest between chunks, so a backlog is worked off beside the traffic rather than ahead of it. */
  pauseMs: number;
}

export const DEFAULT_CHUNK = 1_000;
export const DEFAULT_PAUSE_MS = 20;

export type RetentionTable =
  | "messages"
  | "bulk_sends"
  | "mobile_originated"
  | "inbound_messages"
  | "webhook_events"
  | "idempotency_keys";

export type RetentionPass = Record<RetentionTable, number>;

/** Each table's chunk deleter under the policy, in the order a pass runs them (bulk sends after their messages). */
function deleters(p: RetentionPolicy): [RetentionTable, (db: Queryable) => Promise<number>][] {
  return [
    ["messages", (db) => deleteOldMessages(db, p.messageDays, p.chunk)],
    ["bulk_sends", (db) => deleteEmptyBulkSends(db, p.messageDays, p.chunk)],
    ["mobile_originated", (db) => deleteOldMobileOriginated(db, p.messageDays, p.chunk)],
    ["inbound_messages", (db) => deleteOldInboundMessages(db, p.messageDays, p.chunk)],
    ["webhook_events", (db) => deleteSettledEvents(db, p.webhookEventDays, p.chunk)],
    ["idempotency_keys", (db) => deleteExpiredKeys(db, p.idempotencyHours, p.chunk)],
  ];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One retention pass: every table's rows past its window, a chunk per transaction, until none is
 * left. One process at a time across all of Shiri's: each chunk takes a transaction-scoped
 * advisory lock, and a process that finds it taken ends its pass (the holder carries on).
 * Returns the rows deleted per table, or null when another process was at it from the start.
 */
export async function runRetention(
  pool: Pool,
  policy: RetentionPolicy,
  stopping: () => boolean = () => false,
): Promise<RetentionPass | null> {
  const pass: RetentionPass = {
    messages: 0,
    bulk_sends: 0,
    mobile_originated: 0,
    inbound_messages: 0,
    webhook_events: 0,
    idempotency_keys: 0,
  };
  let chunks = 0;
  for (const [table, deleteChunk] of deleters(policy)) {
    for (;;) {
      if (stopping()) return pass;
      const deleted = await withTransaction(pool, async (tx) => {
        const { rows } = await tx.query<{ locked: boolean }>(
          "SELECT pg_try_advisory_xact_lock($1) AS locked",
          [RETENTION_LOCK],
        );
        return rows[0]?.locked ? deleteChunk(tx) : null;
      });
      if (deleted === null) return chunks === 0 ? null : pass;
      chunks++;
      pass[table] += deleted;
      if (deleted < policy.chunk) break;
      await sleep(policy.pauseMs);
    }
  }
  return pass;
}

/** Runs a retention pass every intervalMs on a worker; stop() lets the chunk under way finish. */
export function keepRetention(
  pool: Pool,
  options: {
    policy: RetentionPolicy;
    intervalMs: number;
    onPass: (pass: RetentionPass) => void;
    onError: (err: unknown) => void;
  },
): { stop(): Promise<void> } {
  let stopped = false;
  const periodic = every(
    options.intervalMs,
    async () => {
      const pass = await runRetention(pool, options.policy, () => stopped);
      if (pass) options.onPass(pass);
    },
    options.onError,
  );
  return {
    async stop() {
      stopped = true;
      await periodic.stop();
    },
  };
}
