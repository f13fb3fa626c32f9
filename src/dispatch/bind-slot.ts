import type { Queryable } from "../db/pool.ts";

/**
 * A lease on one of a link's bind slots, shared by every worker through Postgres: a carrier
 * allows an account only so many binds, so a worker binds only while it holds a slot, and a slot
 * whose holder stopped renewing (crashed) is free again once its lease runs out. Each holder says
 * on renewal whether it is bound, so a worker standing by knows whether the link is up elsewhere.
 */
export class BindSlot {
  private slot: number | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly link: string,
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

  /**
   * Extends the lease, saying whether our session is bound; false when the lease was lost (it
   * expired and another worker took the slot).
   */
  async renew(bound = false): Promise<boolean> {
    if (this.slot === null) return false;
    const { rowCount } = await this.db.query(
      `UPDATE smpp_bind_slots SET expires_at = now() + make_interval(secs => $4), bound = $5
        WHERE link = $1 AND slot = $2 AND owner = $3`,
      [this.link, this.slot, this.owner, this.leaseSeconds, bound],
    );
    if (rowCount !== 1) this.slot = null;
    return rowCount === 1;
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
