import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool, type Queryable } from "../../src/db/pool.ts";
import { BindLeases, BindSlot } from "../../src/dispatch/bind-slot.ts";
import { createLogger } from "../../src/logger.ts";
import { dispatchQueue, fetchDispatchJobs, type Queue, queuesDue, startQueue } from "../../src/queue/boss.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { waitFor } from "../support/wait-for.ts";

/**
 * What an idle worker's duties rest on (docs/decisions/0011-idle-worker.md): a process's bind
 * slots renewed in one statement, and the due watch's one statement telling jobs due or running
 * (which keep supervision and the validity sweep at their pace) from none.
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

/** The pool, counting the statements run through it. */
function counted(inner: Pool): Queryable & { statements: number } {
  const counter = { statements: 0, query: inner.query.bind(inner) };
  counter.query = ((...args: unknown[]) => {
    counter.statements++;
    return (inner.query as (...a: unknown[]) => unknown)(...args);
  }) as Pool["query"];
  return counter;
}

describe("a process's bind slots", () => {
  it("are renewed together in one statement, each saying whether it is bound", async () => {
    const a = new BindSlot(pool, "idle-a", 1, "worker-1", 15);
    const b = new BindSlot(pool, "idle-b", 2, "worker-1", 15);
    expect(await a.acquire()).toBe(0);
    expect(await b.acquire()).toBe(0);
    await pool.query(
      "UPDATE smpp_bind_slots SET expires_at = now() + interval '1 second' WHERE link LIKE 'idle-%'",
    );
    const db = counted(pool);
    const leases = new BindLeases(db, "worker-1", 15);
    const lost: string[] = [];
    const lose = (link: string) => () => void lost.push(link);
    const unkeepA = leases.keep(a, () => true, lose("a"));
    const unkeepB = leases.keep(b, () => false, lose("b"));
    await leases.renewAll();
    expect(db.statements).toBe(1);
    expect(lost).toEqual([]);
    const { rows } = await pool.query<{ link: string; bound: boolean; left: number }>(
      `SELECT link, bound, extract(epoch FROM expires_at - now())::float8 AS left
         FROM smpp_bind_slots WHERE link LIKE 'idle-%' ORDER BY link`,
    );
    expect(rows.map((r) => [r.link, r.bound])).toEqual([
      ["idle-a", true],
      ["idle-b", false],
    ]);
    for (const r of rows) expect(r.left).toBeGreaterThan(10);
    unkeepA();
    unkeepB();
    await leases.stop();
  });

  it("tells a link whose lease another worker took, and only that one", async () => {
    const a = new BindSlot(pool, "lost-a", 1, "worker-1", 15);
    const b = new BindSlot(pool, "lost-b", 1, "worker-1", 15);
    await a.acquire();
    await b.acquire();
    const leases = new BindLeases(pool, "worker-1", 15);
    const lost: string[] = [];
    const lose = (link: string) => () => void lost.push(link);
    leases.keep(a, () => true, lose("a"));
    leases.keep(b, () => true, lose("b"));
    // b's lease ran out and another worker took the slot.
    await pool.query("UPDATE smpp_bind_slots SET owner = 'worker-2' WHERE link = 'lost-b'");
    await leases.renewAll();
    expect(lost).toEqual(["b"]);
    expect(b.held).toBeNull();
    expect(a.held).toBe(0);
    // Told once: the next renewal is a's alone.
    await leases.renewAll();
    expect(lost).toEqual(["b"]);
    await leases.stop();
  });
});

describe("a failed renewal of a process's bind slots", () => {
  /** The slots' table locked by another connection: every renewal fails (lock_timeout), for real. */
  async function tableLocked(): Promise<{ unlock(): Promise<void> }> {
    const holder = createPool(db.url, 1);
    const client = await holder.connect();
    await client.query("BEGIN");
    await client.query("LOCK TABLE smpp_bind_slots IN ACCESS EXCLUSIVE MODE");
    return {
      async unlock() {
        await client.query("ROLLBACK");
        client.release();
        await holder.end();
      },
    };
  }
  const timeouts = { statementMs: 5_000, lockMs: 100, idleInTransactionMs: 60_000, connectMs: 5_000 };

  it("loses nothing while the lease still runs, and the next renewal keeps it", async () => {
    const impatient = createPool(db.url, 2, timeouts);
    const slot = new BindSlot(pool, "blip-a", 1, "worker-1", 6);
    await slot.acquire();
    const leases = new BindLeases(impatient, "worker-1", 6);
    const lost: string[] = [];
    leases.keep(
      slot,
      () => true,
      () => void lost.push("a"),
    );
    const lock = await tableLocked();
    await leases.renewAll();
    // Before, one failed renewal unbound every link of the process at once.
    expect(lost).toEqual([]);
    expect(slot.held).toBe(0);
    await lock.unlock();
    await leases.renewAll();
    expect(lost).toEqual([]);
    await leases.stop();
    await impatient.end();
  });

  it("gives a slot up once a third of its lease is left, even while a renewal hangs", async () => {
    // Renewals wait up to 10 s for the lock: one hangs far past the point to give up.
    const patient = createPool(db.url, 2, { ...timeouts, lockMs: 10_000, statementMs: 10_000 });
    const slot = new BindSlot(pool, "blip-b", 1, "worker-1", 6);
    await slot.acquire();
    const leases = new BindLeases(patient, "worker-1", 6);
    const lost: number[] = [];
    const kept = Date.now();
    leases.keep(
      slot,
      () => true,
      () => void lost.push(Date.now() - kept),
    );
    const lock = await tableLocked();
    try {
      const hanging = leases.renewAll();
      await waitFor(() => lost.length > 0, { timeoutMs: 6_000, what: "the slot given up" });
      // A lease of 6 s, given up with 2 s left: before another worker may take the slot.
      expect(lost).toHaveLength(1);
      expect(lost[0]).toBeGreaterThanOrEqual(3_900);
      expect(lost[0]).toBeLessThan(6_000);
      expect(slot.held).toBeNull();
      await lock.unlock();
      await hanging;
      // The renewal that hung ends after it: the slot is not told twice.
      expect(lost).toHaveLength(1);
    } finally {
      await lock.unlock().catch(() => {});
      await leases.stop();
      await patient.end();
    }
  });
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
