import type { Queryable } from "../db/pool.ts";
import type { CrossBaseRelation, IdRelation } from "../domain/smsc-id.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { RelationCounts } from "./apply-receipts.ts";

/**
 * How each link's receipts were found to name their segments: counted in a metric as they match,
 * and added to link_id_matches by `flush`, so what a carrier writes is learnt across every worker
 * and shown by `shiri carrier ids`. It also knows which cross-base relations each link has shown
 * (a match whose ids showed their bases, by this process or, since the last flush, any): only on
 * such a link is an id of digits only read across bases (docs/decisions/0036).
 */
export class IdTally {
  private pending = new Map<string, { matches: number; shown: number }>();
  private readonly shownBy = new Set<string>();

  constructor(private readonly metrics: Metrics) {}

  add(link: string, relations: RelationCounts, shown: RelationCounts = {}): void {
    for (const [relation, count] of Object.entries(relations) as [IdRelation, number][]) {
      if (count <= 0) continue;
      this.metrics.receiptIdMatches.inc({ link, relation }, count);
      const key = `${link}\u0000${relation}`;
      const seen = shown[relation] ?? 0;
      const was = this.pending.get(key) ?? { matches: 0, shown: 0 };
      this.pending.set(key, { matches: was.matches + count, shown: was.shown + seen });
      if (seen > 0) this.shownBy.add(key);
    }
  }

  /** Whether the link has shown it writes one number in two bases this way. */
  hasShown(link: string, relation: CrossBaseRelation): boolean {
    return this.shownBy.has(`${link}\u0000${relation}`);
  }

  /** The links that have shown each cross-base relation, of those given. */
  linksShowing(links: readonly string[]): Record<CrossBaseRelation, string[]> {
    return {
      hex_to_decimal: links.filter((l) => this.hasShown(l, "hex_to_decimal")),
      decimal_to_hex: links.filter((l) => this.hasShown(l, "decimal_to_hex")),
    };
  }

  /**
   * Adds what was counted since the last flush to the table (kept for the next one if it fails),
   * and learns what every worker's links have shown.
   */
  async flush(db: Queryable): Promise<void> {
    // Idle, it asks nothing: a worker learns the others' links while it matches receipts itself.
    if (this.pending.size === 0) return;
    const taken = this.pending;
    this.pending = new Map();
    const rows = [...taken].map(([key, count]) => {
      const [link = "", relation = ""] = key.split("\u0000");
      return { link, relation, ...count };
    });
    try {
      await db.query(
        `INSERT INTO link_id_matches (link, relation, matches, shown, last_at)
           SELECT l, r, n, s, now() FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS u(l, r, n, s)
           ON CONFLICT (link, relation) DO UPDATE
              SET matches = link_id_matches.matches + EXCLUDED.matches,
                  shown = link_id_matches.shown + EXCLUDED.shown, last_at = now()`,
        [
          rows.map((r) => r.link),
          rows.map((r) => r.relation),
          rows.map((r) => r.matches),
          rows.map((r) => r.shown),
        ],
      );
    } catch (err) {
      for (const [key, count] of taken) {
        const was = this.pending.get(key) ?? { matches: 0, shown: 0 };
        this.pending.set(key, { matches: was.matches + count.matches, shown: was.shown + count.shown });
      }
      throw err;
    }
    const { rows: shown } = await db.query<{ link: string; relation: string }>(
      "SELECT link, relation FROM link_id_matches WHERE shown > 0",
    );
    for (const r of shown) this.shownBy.add(`${r.link}\u0000${r.relation}`);
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
