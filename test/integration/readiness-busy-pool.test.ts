import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestService, type TestService } from "../support/service.ts";

/**
 * /readyz tells a database that does not answer from a pool that is merely busy. While requests
 * hold every pooled connection (a burst of sends, a slow search, an export), the database still
 * answers at once: the process stays ready, so that a load balancer does not take every replica
 * out at peak load. Its check then asks on a connection of its own, which closes once idle; with
 * a connection to spare in the pool, it opens none.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService({ PG_POOL_MAX: "2", PG_POOL_IDLE_MS: "300" });
});
afterAll(() => t?.stop());

/** The backends readiness holds of its own (application_name shiri-readiness). */
async function readinessBackends(): Promise<number> {
  const { rows } = await t.service.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'shiri-readiness'`,
  );
  return rows[0]?.n ?? 0;
}

/** The database answers within the readiness cache's second only after this long. */
const CACHE_PASSED_MS = 1_100;

describe("readiness while the pool is busy", () => {
  it("stays ready when the database answers, however busy the pool", async () => {
    // Two requests hold the pool's two connections for 1.5 s each: past the check's 1 s.
    const busy = [t.service.pool.query("SELECT pg_sleep(1.5)"), t.service.pool.query("SELECT pg_sleep(1.5)")];
    await new Promise((r) => setTimeout(r, 100));
    const answer = await call(t.base, "GET", "/readyz");
    await Promise.all(busy);
    expect(answer.body).toMatchObject({ status: "ready", checks: { database: { ok: true } } });
    expect(answer.status).toBe(200);
  });

  it("holds no connection of its own once idle, and opens none while the pool has one to spare", async () => {
    const deadline = Date.now() + 5_000;
    while ((await readinessBackends()) > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(await readinessBackends()).toBe(0);
    await new Promise((r) => setTimeout(r, CACHE_PASSED_MS));
    const answer = await call(t.base, "GET", "/readyz");
    expect(answer.status).toBe(200);
    expect(await readinessBackends()).toBe(0);
  });
});
