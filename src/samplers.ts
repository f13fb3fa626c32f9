import { OPERATORS } from "../carriers/index.ts";
import type { Config } from "./config.ts";
import type { Pool } from "./db/pool.ts";
import { sampleOpenMessages } from "./lifecycle/open-mark.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./observability/metrics.ts";
import { every } from "./periodic.ts";
import { dispatchQueue } from "./queue/boss.ts";
import { countPendingEvents } from "./webhooks/callback-log.ts";

/*
 * Beside service.ts at the top of the layers (docs/decisions/0010): it reads every stage's tables
 * into src/observability's gauges, while src/observability itself stays below the stages.
 */

/** About a Prometheus scrape interval: sampled more often, an idle process pays for values nobody reads. */
const SAMPLE_EVERY_MS = 15_000;

/**
 * Gauges that are a fact of the database, not of one process: sampled on a timer (not per
 * scrape), so their cost is bounded whatever scrapes them. Every process reports the same
 * values; dashboards take the max across instances.
 */
export function startSamplers(
  metrics: Metrics,
  pool: Pool,
  config: Config,
  logger: Logger,
  /** `everyMs`: how often to sample (about a scrape interval unless a test says otherwise). */
  options: { everyMs?: number } = {},
): { stop(): void } {
  for (const [link, settings] of Object.entries(config.links))
    metrics.tpsLimit.set({ link }, settings.tps_limit);
  const sample = async () => {
    // A job waits from when it is due: a scheduled send's job (or a retry in back-off) is not
    // late before its start time, so it counts apart and never ages the queue.
    const queues = await pool.query<{ name: string; jobs: number; oldest: number | null; later: number }>(
      `SELECT name, count(*) FILTER (WHERE start_after <= now())::int AS jobs,
              extract(epoch FROM now() - min(greatest(created_on, start_after))
                                         FILTER (WHERE start_after <= now()))::float8 AS oldest,
              count(*) FILTER (WHERE start_after > now())::int AS later
         FROM pgboss.job WHERE name = ANY($1) AND state IN ('created', 'retry') GROUP BY name`,
      [OPERATORS.map(dispatchQueue)],
    );
    for (const op of OPERATORS) {
      const row = queues.rows.find((r) => r.name === dispatchQueue(op));
      metrics.queueDepth.set({ operator: op }, row?.jobs ?? 0);
      metrics.queueOldestAge.set({ operator: op }, row?.oldest ?? 0);
      metrics.queueNotYetDue.set({ operator: op }, row?.later ?? 0);
    }
    // Only messages not yet final hold money: read from the open-messages watermark, not the table.
    const open = await sampleOpenMessages(pool);
    metrics.holdsOutstanding.reset();
    metrics.holdsOutstanding.set({ currency: "USD" }, 0);
    for (const h of open.held) metrics.holdsOutstanding.set({ currency: h.currency }, h.held);
    for (const op of OPERATORS)
      metrics.oldestOpenMessageAge.set(
        { operator: op },
        open.oldestSeconds.find((o) => o.operator === op)?.seconds ?? 0,
      );
    metrics.webhookBacklog.set(await countPendingEvents(pool));
  };
  // A failure that lasts (a statement timeout on a large backlog, a lost permission on
  // pgboss.job) freezes these gauges and silences their alerts, so it is said; but once, not at
  // every pass of every process: its first failure, then one line when sampling succeeds again.
  // While the database is out of reach, the outage lines (src/logger.ts) count this warning with
  // every other loop's instead.
  let failing: { since: number; failures: number } | null = null;
  const pass = async () => {
    await sample();
    if (!failing) return;
    logger.info(
      { failures: failing.failures, failing_ms: Date.now() - failing.since },
      "sampling succeeds again",
    );
    failing = null;
  };
  const failed = (err: unknown) => {
    if (failing) {
      failing.failures++;
      return;
    }
    failing = { since: Date.now(), failures: 1 };
    logger.warn(
      { err },
      "sampling failed: the queue, open-message and callback-backlog gauges keep their last values",
    );
  };
  const sampling = every(options.everyMs ?? SAMPLE_EVERY_MS, pass, failed, { firstMs: 0 });
  return { stop: () => void sampling.stop() };
}
