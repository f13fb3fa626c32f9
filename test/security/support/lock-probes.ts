import { randomUUID } from "node:crypto";
import pg from "pg";
import { schemaFingerprint } from "./databases.ts";

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

const FILLED_TABLES = ["messages", "ledger_entries", "message_parts", "webhook_events"] as const;
type FilledTable = (typeof FILLED_TABLES)[number];

/** What dropIndexesAndKeys took away, as the statements that make it again. */
interface DroppedIndexes {
  /** Each table's indexes, primary key and unique constraints. */
  keys: Record<FilledTable, string[]>;
  /** The foreign keys on or to the tables: made once every key they need is back. */
  foreignKeys: string[];
}

/**
 * Drops the filled tables' indexes and constraints (foreign keys on or to them included), all but
 * NOT NULL and CHECK. Each definition is kept as the catalogue gives it (pg_get_indexdef,
 * pg_get_constraintdef), so the names and options come back as they were.
 */
async function dropIndexesAndKeys(client: pg.PoolClient): Promise<DroppedIndexes> {
  const { rows } = await client.query<{ tbl: FilledTable | null; drop_sql: string; create_sql: string }>(
    `SELECT CASE WHEN c.contype = 'f' THEN NULL ELSE c.conrelid::regclass::text END AS tbl,
            format('ALTER TABLE %s DROP CONSTRAINT %I', c.conrelid::regclass, c.conname) AS drop_sql,
            format('ALTER TABLE %s ADD CONSTRAINT %I %s', c.conrelid::regclass, c.conname,
                   pg_get_constraintdef(c.oid)) AS create_sql,
            CASE c.contype WHEN 'f' THEN 0 ELSE 2 END AS drop_order
       FROM pg_constraint c
      WHERE c.contype IN ('f', 'p', 'u', 'x')
        AND (c.conrelid = ANY ($1::regclass[]) OR (c.contype = 'f' AND c.confrelid = ANY ($1::regclass[])))
     UNION ALL
     SELECT i.indrelid::regclass::text, format('DROP INDEX %s', i.indexrelid::regclass),
            pg_get_indexdef(i.indexrelid), 1
       FROM pg_index i
      WHERE i.indrelid = ANY ($1::regclass[])
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype <> 'f')
     ORDER BY drop_order, create_sql`,
    [FILLED_TABLES],
  );
  const dropped: DroppedIndexes = {
    keys: { messages: [], ledger_entries: [], message_parts: [], webhook_events: [] },
    foreignKeys: [],
  };
  for (const { tbl, drop_sql, create_sql } of rows) {
    await client.query(drop_sql);
    (tbl === null ? dropped.foreignKeys : dropped.keys[tbl]).push(create_sql);
  }
  return dropped;
}

/**
 * Runs each list of statements on a connection of its own, the lists at once (as many as the pool
 * has connections): steps of the fill that need nothing of one another, each of which Postgres
 * runs on one core.
 */
async function atOnce(pool: pg.Pool, lists: readonly (readonly string[])[]): Promise<void> {
  await Promise.all(
    lists.map(async (statements) => {
      const client = await pool.connect();
      try {
        // More sort memory for the index builds, on these connections only: the pool's are the
        // ones the migrations run on afterwards, with the server's own.
        await client.query(
          "SET session_replication_role = replica; SET statement_timeout = 0; SET maintenance_work_mem = '256MB'",
        );
        for (const statement of statements) await client.query(statement);
      } finally {
        await client.query(
          "RESET session_replication_role; RESET statement_timeout; RESET maintenance_work_mem",
        );
        client.release();
      }
    }),
  );
}

/**
 * Fills the large tables as migration 003 left them: `count` messages of one account, each with
 * a hold on the ledger (the account's captures one row), a segment and a callback event. Foreign
 * keys are not checked row by row (session_replication_role), and the indexes and keys are built once after
 * the fill rather than kept up row by row, the tables each on a connection of its own; that takes
 * minutes off the fill. The schema is then checked to be exactly what the migrations made.
 */
export async function fillLargeTables(pool: pg.Pool, count: number): Promise<ProbeTargets> {
  const accountId = randomUUID();
  const client = await pool.connect();
  try {
    await client.query("SET session_replication_role = replica; SET statement_timeout = 0");
    const migrated = await schemaFingerprint(client);
    const dropped = await dropIndexesAndKeys(client);
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
         FROM generate_series(1, $2::int) g, LATERAL (SELECT now() - make_interval(secs => g) AS t) at`,
      [accountId, count],
    );
    await client.query("SET session_replication_role = DEFAULT");
    await atOnce(pool, [
      [
        `INSERT INTO ledger_entries (account_id, kind, amount, message_id, created_at)
         SELECT account_id, 'hold', charge, id, created_at FROM messages
         UNION ALL
         SELECT account_id, 'capture', sum(charge), NULL, max(created_at) FROM messages WHERE billing = 'captured'
          GROUP BY account_id`,
        ...dropped.keys.ledger_entries,
      ],
      [
        `INSERT INTO message_parts (message_id, part_no, operator, smsc_id, accepted_at, receipt_state, receipt_at)
         SELECT id, 1, operator, md5(id::text), accepted_at,
                CASE WHEN delivered_at IS NOT NULL THEN 'DELIVRD' END, delivered_at
           FROM messages WHERE accepted_at IS NOT NULL`,
        ...dropped.keys.message_parts,
      ],
      [
        `INSERT INTO webhook_events (id, account_id, message_id, type, url, payload, state, attempts, created_at,
                                     completed_at, last_attempt_at, last_status)
         SELECT gen_random_uuid(), account_id, id, 'message.delivered', 'https://example.com/hooks', '{}',
                'delivered', 1, created_at, created_at, created_at, 200
           FROM messages WHERE delivered_at IS NOT NULL`,
        ...dropped.keys.webhook_events,
      ],
      dropped.keys.messages,
    ]);
    // Validated over every row, as the migrations made them.
    await atOnce(
      pool,
      dropped.foreignKeys.map((fk) => [fk]),
    );
    const refilled = await schemaFingerprint(client);
    if (refilled.join("\n") !== migrated.join("\n")) {
      const lost = migrated.filter((l) => !refilled.includes(l));
      const gained = refilled.filter((l) => !migrated.includes(l));
      throw new Error(`the filled tables differ from the migrated ones: lost ${lost}; gained ${gained}`);
    }
    // As a running system has them: visibility map set, statistics known (autovacuum may be off).
    await atOnce(
      pool,
      FILLED_TABLES.map((t) => [`VACUUM (ANALYZE) ${t}`]),
    );
    const sample = async (table: string) =>
      (
        await client.query<{ id: string }>(`SELECT id FROM ${table} TABLESAMPLE SYSTEM (1) LIMIT 1000`)
      ).rows.map((r) => r.id);
    return { accountId, messageIds: await sample("messages"), eventIds: await sample("webhook_events") };
  } finally {
    client.release();
  }
}
