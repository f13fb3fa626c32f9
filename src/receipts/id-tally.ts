import type { Queryable } from "../db/pool.ts";
import type { IdRelation } from "../domain/smsc-id.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { RelationCounts } from "./apply-receipts.ts";

/**
 * How each link's receipts were found to name their segments: counted in a metric as they match,
 * and added to link_id_matches by `flush`, so what a carrier writes is learnt across every worker
 * and shown by `shiri carrier ids`.
 */
export class IdTally {
  private pending = new Map<string, number>();

  constructor(private readonly metrics: Metrics) {}

  add(link: string, relations: RelationCounts): void {
    for (const [relation, count] of Object.entries(relations) as [IdRelation, number][]) {
      if (count <= 0) continue;
      this.metrics.receiptIdMatches.inc({ link, relation }, count);
      const key = `${link}\u0000${relation}`;
      this.pending.set(key, (this.pending.get(key) ?? 0) + count);
    }
  }

  /** Adds what was counted since the last flush to the table; kept for the next one if it fails. */
  async flush(db: Queryable): Promise<void> {
    if (this.pending.size === 0) return;
    const taken = this.pending;
    this.pending = new Map();
    const rows = [...taken].map(([key, count]) => [...key.split("\u0000"), count] as const);
    try {
      await db.query(
        `INSERT INTO link_id_matches (link, relation, matches, last_at)
         SELECT l, r, n, now() FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(l, r, n)
         ON CONFLICT (link, relation) DO UPDATE
            SET matches = link_id_matches.matches + EXCLUDED.matches, last_at = now()`,
        [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
      );
    } catch (err) {
      for (const [key, count] of taken) this.pending.set(key, (this.pending.get(key) ?? 0) + count);
      throw err;
    }
  }
}

export interface LinkIdReport {
  link: string;
  /** Matches by relation, over every worker since the link was first used. */
  matches: Partial<Record<IdRelation, number>>;
  /** What the carrier was found to write: the relation of most matches, or null before any. */
  learnt: IdRelation | null;
  last_match_at: string | null;
}

/** What each link's receipts were found to use (for `shiri carrier ids`). */
export async function linkIdReports(db: Queryable, links: readonly string[]): Promise<LinkIdReport[]> {
  const { rows } = await db.query<{ link: string; relation: IdRelation; matches: string; last_at: Date }>(
    "SELECT link, relation, matches, last_at FROM link_id_matches WHERE link = ANY($1) ORDER BY link, matches DESC",
    [links],
  );
  return links.map((link) => {
    const mine = rows.filter((r) => r.link === link);
    const last = mine.reduce<Date | null>((at, r) => (at === null || r.last_at > at ? r.last_at : at), null);
    return {
      link,
      matches: Object.fromEntries(mine.map((r) => [r.relation, Number(r.matches)])),
      learnt: mine[0]?.relation ?? null,
      last_match_at: last?.toISOString() ?? null,
    };
  });
}
