import type { Tx } from "../db/pool.ts";

/**
 * How many events an account may redeliver (WEBHOOK_REDELIVERIES_PER_HOUR): a bucket per account
 * that holds an hour's worth and drains at that pace (migration 023), in Postgres so that every API
 * process takes from the same one. Taken in the redelivery's own transaction, all or nothing: a
 * redelivery that does not fit changes nothing and is told when it would.
 */
export type BudgetDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export async function takeRedeliveryBudget(
  tx: Tx,
  accountId: string,
  events: number,
  perHour: number,
): Promise<BudgetDecision> {
  if (perHour <= 0 || events === 0) return { allowed: true };
  // Creates the account's bucket the first time, and locks it: redeliveries of one account queue here.
  // A bucket never holds more than an hour's worth, also when the limit was lowered since it filled.
  const { rows } = await tx.query<{ level: number }>(
    `INSERT INTO webhook_redelivery_budget AS b (account_id) VALUES ($1)
     ON CONFLICT (account_id) DO UPDATE SET level = b.level
     RETURNING least($2::float8,
                     greatest(0, b.level - extract(epoch FROM now() - b.at) * $2::float8 / 3600)) AS level`,
    [accountId, perHour],
  );
  const level = rows[0]?.level ?? 0;
  // The epsilon keeps a float a hair over a whole number from refusing it.
  if (level + events > perHour + 1e-9)
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil(((level + events - perHour) * 3600) / perHour)),
    };
  await tx.query("UPDATE webhook_redelivery_budget SET level = $2, at = now() WHERE account_id = $1", [
    accountId,
    level + events,
  ]);
  return { allowed: true };
}
