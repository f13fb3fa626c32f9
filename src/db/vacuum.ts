import type pg from "pg";
import { every } from "../periodic.ts";

/** Any constant works; it only has to be the same in every process. */
const VACUUM_LOCK = 7_426_002;

/**
 * The tables a send, its dispatch, its receipts and its callbacks churn: every row is inserted,
 * updated and (for the queue and the outbox) deleted within minutes. pg-boss's tables are found
 * by schema, whatever partitions it keeps.
 */
const CHURNED = [
  "messages",
  "message_parts",
  "early_receipts",
  "account_balances",
  "webhook_events",
  "idempotency_keys",
  "smpp_bind_slots",
  // Retention deletes from these (src/retention); the samplers move the watermark every few seconds;
  // the auth-failure counter deletes its rows at each flush.
  "bulk_sends",
  "mobile_originated",
  "inbound_messages",
  "auth_failures",
  "upkeep_marks",
  "rate_limit_state",
];

export interface VacuumPolicy {
  /** Dead rows (and a share of live ones) past which a table is vacuumed. */
  deadRows: number;
  deadShare: number;
  /** Rows changed since the last ANALYZE past which statistics are refreshed. */
  changedRows: number;
  changedShare: number;
  /**
   * The least time between two ANALYZEs of a table that has been analysed before. VACUUM keeps
   * the row count the planner uses current in between; ANALYZE samples up to 30,000 rows of the
   * table however few changed, so on a busy table every pass would pay for it again.
   */
  analyzeEverySeconds: number;
}

export const DEFAULT_VACUUM_POLICY: VacuumPolicy = {
  deadRows: 5_000,
  deadShare: 0.1,
  changedRows: 2_000,
  changedShare: 0.1,
  // Autovacuum's own pace: it visits each database once a minute (autovacuum_naptime).
  analyzeEverySeconds: 60,
};

interface TableStats {
  schemaname: string;
  relname: string;
  n_live_tup: number;
  n_dead_tup: number;
  n_mod_since_analyze: number;
  /** Seconds since the table's last ANALYZE, by Shiri or by autovacuum; null if never. */
  since_analyze: number | null;
}

/** The tables a pass vacuumed and those it analysed (a table in both had VACUUM (ANALYZE)). */
export interface VacuumPass {
  vacuumed: string[];
  analyzed: string[];
}

/**
 * What each table needs now: VACUUM for dead rows past the policy, ANALYZE for changed rows past
 * it once analyzeEverySeconds have passed since the last one (at once for a table never analysed).
 */
export function planVacuum(stats: readonly TableStats[], policy: VacuumPolicy): VacuumPass {
  const vacuumed: string[] = [];
  const analyzed: string[] = [];
  for (const t of stats) {
    const name = `${t.schemaname}.${t.relname}`;
    if (t.n_dead_tup >= Math.max(policy.deadRows, policy.deadShare * t.n_live_tup)) vacuumed.push(name);
    const changed = t.n_mod_since_analyze >= Math.max(policy.changedRows, policy.changedShare * t.n_live_tup);
    if (changed && (t.since_analyze === null || t.since_analyze >= policy.analyzeEverySeconds))
      analyzed.push(name);
  }
  return { vacuumed, analyzed };
}

/** The command each table of a pass gets, in the pass's order. */
function commandsOf(pass: VacuumPass): Array<{ command: string; name: string }> {
  const analyzed = new Set(pass.analyzed);
  const vacuumed = new Set(pass.vacuumed);
  return [
    ...pass.vacuumed.map((name) => ({ command: analyzed.has(name) ? "VACUUM (ANALYZE)" : "VACUUM", name })),
    ...pass.analyzed.filter((name) => !vacuumed.has(name)).map((name) => ({ command: "ANALYZE", name })),
  ];
}

/** Whether the server vacuums by itself (autovacuum on); if not, Shiri keeps its own tables. */
export async function autovacuumIsOn(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query<{ autovacuum: string }>("SHOW autovacuum");
  return rows[0]?.autovacuum === "on";
}

/**
 * One pass of Shiri's own vacuuming, for servers that run with autovacuum off: the churned tables
 * whose dead rows or changes passed the policy are vacuumed, analysed or both, one at a time, by one
 * process at a time across all of Shiri's processes (an advisory lock; a process that finds it
 * taken skips the pass). VACUUM runs outside any transaction on a connection of its own with no
 * statement timeout, which is then closed rather than returned to the pool.
 */
export async function vacuumChurnedTables(pool: pg.Pool, policy: VacuumPolicy): Promise<VacuumPass> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken ??= err;
  };
  client.on("error", onError);
  let locked = false;
  let timeoutLifted = false;
  try {
    locked =
      (await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [VACUUM_LOCK]))
        .rows[0]?.locked === true;
    if (!locked) return { vacuumed: [], analyzed: [] };
    const { rows } = await client.query<TableStats>(
      `SELECT schemaname, relname, n_live_tup::float8 AS n_live_tup, n_dead_tup::float8 AS n_dead_tup,
              n_mod_since_analyze::float8 AS n_mod_since_analyze,
              extract(epoch FROM now() - greatest(last_analyze, last_autoanalyze))::float8 AS since_analyze
         FROM pg_stat_user_tables
        WHERE (schemaname = current_schema() AND relname = ANY($1::text[])) OR schemaname = 'pgboss'`,
      [CHURNED],
    );
    const pass = planVacuum(rows, policy);
    if (pass.vacuumed.length + pass.analyzed.length === 0) return pass;
    await client.query("SET statement_timeout = 0");
    timeoutLifted = true;
    // Identifiers cannot be parameters: each name is quoted by the server from the catalogue's own.
    for (const { command, name } of commandsOf(pass)) {
      const [schema, table] = name.split(".");
      const quoted = await client.query<{ name: string }>(
        "SELECT format('%I.%I', $1::text, $2::text) AS name",
        [schema, table],
      );
      await client.query(`${command} ${quoted.rows[0]?.name}`);
    }
    return pass;
  } finally {
    if (locked) await client.query("SELECT pg_advisory_unlock($1)", [VACUUM_LOCK]).catch(() => {});
    client.removeListener("error", onError);
    // A session whose timeout was lifted is closed, not handed back to the pool.
    client.release(broken ?? timeoutLifted);
  }
}

/**
 * Runs vacuumChurnedTables every intervalMs while the mode says so ("auto": only when the server's
 * autovacuum is off). A failed pass is reported and the next one tries again.
 */
export function keepVacuumed(
  pool: pg.Pool,
  options: {
    mode: "auto" | "on" | "off";
    intervalMs: number;
    policy?: VacuumPolicy;
    onPass: (pass: VacuumPass) => void;
    onError: (err: unknown) => void;
  },
): { stop(): Promise<void> } {
  if (options.mode === "off") return { stop: async () => {} };
  // Whether the server vacuums by itself is asked once, and again after a failed pass.
  let wanted: Promise<boolean> | null = null;
  return every(
    options.intervalMs,
    async () => {
      wanted ??= options.mode === "on" ? Promise.resolve(true) : autovacuumIsOn(pool).then((on) => !on);
      try {
        if (await wanted)
          options.onPass(await vacuumChurnedTables(pool, options.policy ?? DEFAULT_VACUUM_POLICY));
      } catch (err) {
        wanted = null;
        throw err;
      }
    },
    options.onError,
  );
}
