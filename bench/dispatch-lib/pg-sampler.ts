import type { Pool } from "../../src/db/pool.ts";

/**
 * A poor man's SQL profiler (pg_stat_statements is not installed everywhere): samples
 * pg_stat_activity of one database every few milliseconds and counts, per statement and wait,
 * how often a backend was busy with it. Samples × interval ≈ backend-seconds spent there.
 */
export interface PgSample {
  statement: string;
  wait: string;
  samples: number;
  /** Average number of backends busy with it over the sampled time. */
  busy_backends: number;
}

export function startPgSampler(pool: Pool, intervalMs = 20): { stop(): Promise<PgSample[]> } {
  const counts = new Map<string, { statement: string; wait: string; samples: number }>();
  let ticks = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const { rows } = await pool.query<{ query: string; wait: string | null; state: string }>(
          `SELECT regexp_replace(left(query, 160), '\\s+', ' ', 'g') AS query, state,
                  wait_event_type || ':' || wait_event AS wait
             FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
              AND state IN ('active', 'idle in transaction')`,
        );
        ticks++;
        for (const r of rows) {
          const statement = r.state === "active" ? r.query : "(idle in transaction: client-side work)";
          const wait = r.state === "active" ? (r.wait ?? "cpu") : "-";
          const key = `${statement}\u0000${wait}`;
          const entry = counts.get(key) ?? { statement, wait, samples: 0 };
          entry.samples++;
          counts.set(key, entry);
        }
      } catch {}
      const rest = intervalMs - (performance.now() - started);
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return [...counts.values()]
        .sort((a, b) => b.samples - a.samples)
        .slice(0, 15)
        .map((e) => ({ ...e, busy_backends: ticks ? Math.round((e.samples / ticks) * 100) / 100 : 0 }));
    },
  };
}
