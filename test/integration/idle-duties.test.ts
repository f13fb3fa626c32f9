import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { createLogger } from "../../src/logger.ts";
import { dispatchQueue, fetchDispatchJobs, type Queue, queuesDue, startQueue } from "../../src/queue/boss.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/**
 * What an idle worker's duties rest on (docs/decisions/0011-idle-worker.md): the due watch's one
 * statement telling jobs due or running (which keep supervision and the validity sweep at their
 * pace) from none.
 */
let db: TestDatabase;
let pool: Pool;
let boss: Queue;
beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, 4);
  boss = await startQueue(db.url, createLogger("silent"), { max: 2 });
});
afterAll(async () => {
  await boss?.stop({ graceful: false });
  await pool?.end();
  await db?.drop();
});

describe("the due watch's look at the queues", () => {
  it("tells jobs due or running from jobs only due later", async () => {
    const queue = dispatchQueue("telecel");
    const mine = (states: Awaited<ReturnType<typeof queuesDue>>) => states.find((s) => s.topic === queue);
    expect(mine(await queuesDue(pool))).toBeUndefined();

    await boss.send(queue, { messageIds: [] }, { startAfter: 3_600 });
    const later = mine(await queuesDue(pool));
    expect(later).toMatchObject({ dueNow: false, jobsOpen: false });
    expect(later?.nextDueMs).toBeGreaterThan(3_500_000);

    await boss.send(queue, { messageIds: [] });
    expect(mine(await queuesDue(pool))).toMatchObject({ dueNow: true, jobsOpen: true });

    // Taken by a worker (running): nothing due now, but open, so supervision keeps its pace.
    const jobs = await fetchDispatchJobs(boss, pool, "telecel", 10);
    expect(jobs).toHaveLength(1);
    const running = mine(await queuesDue(pool));
    expect(running).toMatchObject({ dueNow: false, jobsOpen: true });
    expect(running?.nextDueMs).toBeGreaterThan(3_500_000);
  });
});
