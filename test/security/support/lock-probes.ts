import { randomUUID } from "node:crypto";
import pg from "pg";

/**
 * Writes to the large tables, one after another on a connection of each, timed: how long
 * traffic waited while a migration ran. A write that waits is held off by a lock the migration
 * holds or has queued for, so the longest write is the longest a blocking DDL stopped sending.
 */
export const PROBED_TABLES = ["messages", "ledger_entries", "message_parts", "webhook_events"] as const;
export type ProbedTable = (typeof PROBED_TABLES)[number];

export interface ProbeSample {
  /** Longest single write per table, in milliseconds, whatever held it up (CPU included). */
  longestMs: Record<ProbedTable, number>;
  /**
   * Longest time a write of each table was seen waiting for a lock (pg_stat_activity, looked at
   * every few milliseconds): what a blocking DDL cost traffic, apart from a busy machine's noise.
   */
  longestLockWaitMs: Record<ProbedTable, number>;
  writes: number;
}

/** Rows the probes write to, picked once the tables are filled. */
export interface ProbeTargets {
  accountId: string;
  messageIds: string[];
  eventIds: string[];
}

const WRITES: Record<ProbedTable, (t: ProbeTargets, i: number) => [string, unknown[]]> = {
  messages: (t, i) => [
    "UPDATE messages SET updated_at = now() WHERE id = $1",
    [t.messageIds[i % t.messageIds.length]],
  ],
  ledger_entries: (t) => [
    "INSERT INTO ledger_entries (account_id, kind, amount) VALUES ($1, 'top_up', 1)",
    [t.accountId],
  ],
  message_parts: (t, i) => [
    "UPDATE message_parts SET receipt_at = now() WHERE message_id = $1 AND part_no = 1",
    [t.messageIds[i % t.messageIds.length]],
  ],
  webhook_events: (t, i) => [
    "UPDATE webhook_events SET attempts = attempts WHERE id = $1",
    [t.eventIds[i % t.eventIds.length]],
  ],
};

/** Starts a probe per table; `stop` ends them and gives the longest write of each. */
export async function startProbes(
  url: string,
  targets: ProbeTargets,
): Promise<{ stop(): Promise<ProbeSample> }> {
  const clients = await Promise.all(
    PROBED_TABLES.map(async () => {
      const client = new pg.Client({ connectionString: url, application_name: "lock-probe" });
      await client.connect();
      return client;
    }),
  );
  const zeros = () => Object.fromEntries(PROBED_TABLES.map((t) => [t, 0])) as Record<ProbedTable, number>;
  const longestMs = zeros();
  const longestLockWaitMs = zeros();
  const pids = await Promise.all(
    clients.map(
      async (c) => (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? 0,
    ),
  );
  const monitor = new pg.Client({ connectionString: url, application_name: "lock-probe-monitor" });
  await monitor.connect();
  let writes = 0;
  let running = true;
  const watching = (async () => {
    const waitingSince = new Map<number, number>();
    while (running) {
      const { rows } = await monitor.query<{ pid: number; waiting: boolean }>(
        "SELECT pid, wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE pid = ANY ($1)",
        [pids],
      );
      const now = performance.now();
      for (const { pid, waiting } of rows) {
        const since = waitingSince.get(pid);
        if (waiting && since === undefined) waitingSince.set(pid, now);
        if (since === undefined) continue;
        const table = PROBED_TABLES[pids.indexOf(pid)] as ProbedTable;
        longestLockWaitMs[table] = Math.max(longestLockWaitMs[table], now - since);
        if (!waiting) waitingSince.delete(pid);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const loops = PROBED_TABLES.map(async (table, n) => {
    const client = clients[n] as pg.Client;
    for (let i = 0; running; i++) {
      const [text, values] = WRITES[table](targets, i);
      const started = performance.now();
      await client.query(text, values);
      longestMs[table] = Math.max(longestMs[table], performance.now() - started);
      writes++;
      // A few hundred writes a second per table: enough to see any wait, little CPU taken.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all([...loops, watching]);
      await Promise.all([...clients, monitor].map((c) => c.end()));
      return { longestMs, longestLockWaitMs, writes };
    },
  };
}

/**
 * Fills the large tables as migration 003 left them: `count` messages of one account, each with
 * a hold and (most) a capture on the ledger, a segment and a callback event. Foreign keys are not
 * checked row by row (session_replication_role), which takes minutes off the fill.
 */
export async function fillLargeTables(pool: pg.Pool, count: number): Promise<ProbeTargets> {
  const accountId = randomUUID();
  const client = await pool.connect();
  try {
    await client.query("SET session_replication_role = replica; SET statement_timeout = 0");
    await client.query("INSERT INTO accounts (id, name, currency) VALUES ($1, 'lock bench', 'USD')", [
      accountId,
    ]);
    await client.query(
      `INSERT INTO messages (id, account_id, "to", body, sender_id, operator, encoding, segments, charge,
                             charge_currency, operator_response, status, billing, received_at, created_at,
                             accepted_at, delivered_at)
       SELECT gen_random_uuid(), $1, '2637' || lpad((g % 100000000)::text, 8, '0'), 'hello', 'SHIRI',
              (ARRAY['econet', 'netone', 'telecel'])[1 + g % 3], 'gsm7', 1, 450, 'USD',
              CASE WHEN g % 10 = 0 THEN '' ELSE 'DELIVRD' END,
              CASE WHEN g % 10 = 0 THEN 'enqueued' ELSE 'success' END,
              CASE WHEN g % 10 = 0 THEN 'held' ELSE 'captured' END,
              t, t, t, CASE WHEN g % 10 = 0 THEN NULL ELSE t END
         FROM generate_series(1, $2::int) g, LATERAL (SELECT now() - (g || ' seconds')::interval AS t) at`,
      [accountId, count],
    );
    await client.query(
      `INSERT INTO ledger_entries (account_id, kind, amount, message_id, created_at)
       SELECT account_id, 'hold', charge, id, created_at FROM messages
       UNION ALL
       SELECT account_id, 'capture', charge, id, created_at FROM messages WHERE billing = 'captured'`,
    );
    await client.query(
      `INSERT INTO message_parts (message_id, part_no, operator, smsc_id, accepted_at, receipt_state, receipt_at)
       SELECT id, 1, operator, md5(id::text), accepted_at, CASE WHEN delivered_at IS NOT NULL THEN 'DELIVRD' END,
              delivered_at
         FROM messages WHERE accepted_at IS NOT NULL`,
    );
    await client.query(
      `INSERT INTO webhook_events (id, account_id, message_id, type, url, payload, state, attempts, created_at,
                                   completed_at, last_attempt_at, last_status)
       SELECT gen_random_uuid(), account_id, id, 'message.delivered', 'https://example.com/hooks', '{}', 'delivered',
              1, created_at, created_at, created_at, 200
         FROM messages WHERE delivered_at IS NOT NULL`,
    );
    await client.query("SET session_replication_role = DEFAULT");
    // As a running system has them: visibility map set, statistics known (autovacuum may be off).
    await client.query("VACUUM (ANALYZE) messages, ledger_entries, message_parts, webhook_events");
    const sample = async (table: string) =>
      (
        await client.query<{ id: string }>(`SELECT id FROM ${table} TABLESAMPLE SYSTEM (1) LIMIT 1000`)
      ).rows.map((r) => r.id);
    return { accountId, messageIds: await sample("messages"), eventIds: await sample("webhook_events") };
  } finally {
    client.release();
  }
}
