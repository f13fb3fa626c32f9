/**
 * Where a message's time from request to callback went, read from the run's database once it is
 * over (BENCH_PIPELINE_STAGES=1): each stage's p50, p90 and p99 in ms over the delivered
 * message.delivered events, and, per settle (the events one transaction wrote share its start
 * time), how long its first callback waited and how far apart its first and last went out.
 */
import type { Pool } from "../../src/db/pool.ts";
import { percentile } from "../dispatch-lib/stats.ts";

export interface StageSpread {
  stage: string;
  p50_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
  count: number;
}

const ms = (from: string, to: string) => `(extract(epoch FROM ${to} - ${from}) * 1000)::float8`;

const PER_MESSAGE = `
  SELECT ${ms("m.received_at", "m.accepted_at")} AS "received → accepted by the carrier",
         ${ms("m.accepted_at", "m.delivered_at")} AS "accepted → delivered",
         ${ms("m.delivered_at", "e.created_at")} AS "delivered → event written",
         ${ms("e.created_at", "e.last_attempt_at")} AS "event written → callback answered",
         ${ms("m.received_at", "e.last_attempt_at")} AS "received → callback answered"
    FROM messages m JOIN webhook_events e ON e.message_id = m.id
   WHERE e.type = 'message.delivered' AND e.state = 'delivered' AND m.received_at >= $1`;

const PER_SETTLE = `
  SELECT min(d) AS "a settle's first callback, after the settle",
         max(d) - min(d) AS "a settle's first callback → its last"
    FROM (SELECT created_at, ${ms("created_at", "last_attempt_at")} AS d
            FROM webhook_events WHERE type = 'message.delivered' AND state = 'delivered' AND created_at >= $1) e
   GROUP BY created_at`;

async function spreads(pool: Pool, source: string, from: Date): Promise<StageSpread[]> {
  const { rows } = await pool.query<Record<string, number | null>>(source, [from]);
  const columns = rows[0] ? Object.keys(rows[0]) : [];
  return columns.map((stage) => {
    const values = rows
      .map((r) => r[stage])
      .filter((v): v is number => typeof v === "number")
      .sort((a, b) => a - b);
    const at = (p: number) => (values.length === 0 ? null : Math.round(percentile(values, p)));
    return { stage, p50_ms: at(50), p90_ms: at(90), p99_ms: at(99), count: values.length };
  });
}

/** The stages of the messages received from `from` on (the measured run's, not a warm-up's). */
export async function callbackStages(pool: Pool, from: Date): Promise<StageSpread[]> {
  return [...(await spreads(pool, PER_MESSAGE, from)), ...(await spreads(pool, PER_SETTLE, from))];
}
