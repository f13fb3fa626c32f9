import type { Queryable } from "../db/pool.ts";
import { jittered } from "../periodic.ts";

/**
 * A lease on one of a link's bind slots, shared by every worker through Postgres: a carrier
 * allows an account only so many binds, so a worker binds only while it holds a slot, and a slot
 * whose holder stopped renewing (crashed) is free again once its lease runs out. Each holder says
 * on renewal (BindLeases, below) whether it is bound, so a worker standing by knows whether the
 * link is up elsewhere.
 */
export class BindSlot {
  private slot: number | null = null;

  constructor(
    private readonly db: Queryable,
    readonly link: string,
    private readonly maxBinds: number,
    private readonly owner: string,
    private readonly leaseSeconds: number,
  ) {}

  get held(): number | null {
    return this.slot;
  }

  /** Takes a free (or expired, or already our own) slot; null when all are held by others. */
  async acquire(): Promise<number | null> {
    for (let slot = 0; slot < this.maxBinds; slot++) {
      const { rowCount } = await this.db.query(
        `INSERT INTO smpp_bind_slots (link, slot, owner, expires_at, bound)
         VALUES ($1, $2, $3, now() + make_interval(secs => $4), false)
         ON CONFLICT (link, slot) DO UPDATE
            SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, bound = false
          WHERE smpp_bind_slots.expires_at < now() OR smpp_bind_slots.owner = EXCLUDED.owner`,
        [this.link, slot, this.owner, this.leaseSeconds],
      );
      if (rowCount === 1) {
        this.slot = slot;
        return slot;
      }
    }
    return null;
  }

  /** Whether any live holder of the link's slots says it is bound (asked while standing by). */
  async boundElsewhere(): Promise<boolean> {
    const { rows } = await this.db.query<{ bound: boolean | null }>(
      "SELECT bool_or(bound) AS bound FROM smpp_bind_slots WHERE link = $1 AND expires_at >= now()",
      [this.link],
    );
    return rows[0]?.bound === true;
  }

  /** The lease was lost (found by BindLeases): the slot is no longer ours. */
  forget(): void {
    this.slot = null;
  }

  async release(): Promise<void> {
    if (this.slot === null) return;
    await this.db.query("DELETE FROM smpp_bind_slots WHERE link = $1 AND slot = $2 AND owner = $3", [
      this.link,
      this.slot,
      this.owner,
    ]);
    this.slot = null;
  }
}

interface Kept {
  bound: () => boolean;
  lost: () => void;
  /** Until when the lease is surely ours (this process's clock): the last renewal sent + a lease. */
  heldUntil: number;
}

/** After a renewal that failed, the next try comes this soon (the lease still runs meanwhile). */
const RETRY_AFTER_FAILURE_MS = 1_000;

/**
 * Every bind slot a process holds, renewed together: one statement a third of a lease (jittered)
 * for all of the process's links, instead of one statement and one timer per link
 * (docs/decisions/0011-idle-worker.md). A slot whose lease was lost (it expired and another worker
 * took it) is told so through its `lost`. A renewal that failed (the database dropped the
 * connection, say) loses nothing yet: it is tried again every second. A slot is given up, by a
 * timer of its own whatever a renewal is doing, once a third of its lease is left: time for its
 * link to stop submitting and unbind before another worker may take the slot, while a renewal on
 * time (every third of a lease, jittered by a fifth) never comes near it.
 */
export class BindLeases {
  readonly #kept = new Map<BindSlot, Kept>();
  #timer: NodeJS.Timeout | null = null;
  #renewing: Promise<void> | null = null;
  /** The last renewal failed: the next comes after RETRY_AFTER_FAILURE_MS, not a third of a lease. */
  #failed = false;
  /** Gives up the slots whose lease has only a third left, unrenewed. */
  #deadline: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly owner: string,
    private readonly leaseSeconds: number,
  ) {}

  /**
   * Keeps renewing the slot (held by this process's owner), saying `bound()` each time, until the
   * returned function is called or its lease is lost (`lost` is called then, once).
   */
  keep(slot: BindSlot, bound: () => boolean, lost: () => void): () => void {
    // Taken just now: its lease runs a full lease from about now.
    this.#kept.set(slot, { bound, lost, heldUntil: Date.now() + this.leaseSeconds * 1000 });
    this.#schedule();
    this.#armDeadline();
    return () => {
      this.#kept.delete(slot);
      if (this.#kept.size === 0) this.#cancel();
    };
  }

  /** Renews every slot kept, in one statement. */
  renewAll(): Promise<void> {
    this.#renewing ??= this.#renew().finally(() => {
      this.#renewing = null;
    });
    return this.#renewing;
  }

  async stop(): Promise<void> {
    this.#cancel();
    await this.#renewing;
  }

  async #renew(): Promise<void> {
    const kept = [...this.#kept].filter(([slot]) => slot.held !== null);
    if (kept.length === 0) return;
    let renewed: Set<string>;
    const sentAt = Date.now();
    try {
      const { rows } = await this.db.query<{ link: string; slot: number }>({
        name: "shiri_bind_slots_renew",
        text: `UPDATE smpp_bind_slots s SET expires_at = now() + make_interval(secs => $2), bound = k.bound
                 FROM unnest($3::text[], $4::int[], $5::bool[]) AS k(link, slot, bound)
                WHERE s.link = k.link AND s.slot = k.slot AND s.owner = $1
            RETURNING s.link, s.slot`,
        values: [
          this.owner,
          this.leaseSeconds,
          kept.map(([slot]) => slot.link),
          kept.map(([slot]) => slot.held),
          kept.map(([, k]) => k.bound()),
        ],
      });
      renewed = new Set(rows.map((r) => `${r.link}\u0000${r.slot}`));
    } catch {
      // Not renewed, but not lost either: each lease runs until the time its last renewal gave it,
      // and the deadline gives it up in time.
      this.#failed = true;
      return;
    }
    this.#failed = false;
    for (const [slot, k] of kept) {
      if (this.#kept.get(slot) !== k) continue; // given up while the renewal ran
      if (renewed.has(`${slot.link}\u0000${slot.held}`)) k.heldUntil = sentAt + this.leaseSeconds * 1000;
      else this.#lose(slot, k);
    }
    this.#armDeadline();
  }

  #lose(slot: BindSlot, k: Kept): void {
    this.#kept.delete(slot);
    slot.forget();
    k.lost();
  }

  /** When a third of a lease is left: from then on the slot is given up, renewed or not. */
  #giveUpAt(k: Kept): number {
    return k.heldUntil - (this.leaseSeconds * 1000) / 3;
  }

  #armDeadline(): void {
    if (this.#deadline) clearTimeout(this.#deadline);
    this.#deadline = null;
    if (this.#kept.size === 0) return;
    const first = Math.min(...[...this.#kept.values()].map((k) => this.#giveUpAt(k)));
    this.#deadline = setTimeout(
      () => {
        this.#deadline = null;
        for (const [slot, k] of [...this.#kept]) if (this.#giveUpAt(k) <= Date.now()) this.#lose(slot, k);
        this.#armDeadline();
      },
      Math.max(0, first - Date.now()),
    );
    this.#deadline.unref();
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        void this.renewAll().finally(() => {
          if (this.#kept.size > 0) this.#schedule();
        });
      },
      this.#failed ? RETRY_AFTER_FAILURE_MS : jittered((this.leaseSeconds * 1000) / 3),
    );
    this.#timer.unref();
  }

  #cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#deadline) clearTimeout(this.#deadline);
    this.#deadline = null;
  }
}
