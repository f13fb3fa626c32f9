import type { Operator } from "../../carriers/index.ts";
import type { Queryable } from "../db/pool.ts";

/**
 * A lease on one of an operator's bind slots, shared by every worker through Postgres: a
 * carrier allows only so many binds, so a worker binds only while it holds a slot, and a slot
 * whose holder stopped renewing (crashed) is free again once its lease runs out.
 */
export class BindSlot {
  private slot: number | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly operator: Operator,
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
        `INSERT INTO smpp_bind_slots (operator, slot, owner, expires_at)
         VALUES ($1, $2, $3, now() + make_interval(secs => $4))
         ON CONFLICT (operator, slot) DO UPDATE
            SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
          WHERE smpp_bind_slots.expires_at < now() OR smpp_bind_slots.owner = EXCLUDED.owner`,
        [this.operator, slot, this.owner, this.leaseSeconds],
      );
      if (rowCount === 1) {
        this.slot = slot;
        return slot;
      }
    }
    return null;
  }

  /** Extends the lease; false when it was lost (it expired and another worker took the slot). */
  async renew(): Promise<boolean> {
    if (this.slot === null) return false;
    const { rowCount } = await this.db.query(
      `UPDATE smpp_bind_slots SET expires_at = now() + make_interval(secs => $4)
        WHERE operator = $1 AND slot = $2 AND owner = $3`,
      [this.operator, this.slot, this.owner, this.leaseSeconds],
    );
    if (rowCount !== 1) this.slot = null;
    return rowCount === 1;
  }

  async release(): Promise<void> {
    if (this.slot === null) return;
    await this.db.query("DELETE FROM smpp_bind_slots WHERE operator = $1 AND slot = $2 AND owner = $3", [
      this.operator,
      this.slot,
      this.owner,
    ]);
    this.slot = null;
  }
}
