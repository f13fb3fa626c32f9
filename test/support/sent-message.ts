import type { Queryable } from "../../src/db/pool.ts";

/**
 * A message of a new account that the econet link took, one segment with the SMSC id `smscId`,
 * as the worker leaves it before its receipt; its id.
 */
export async function insertSentMessage(db: Queryable, smscId: string): Promise<string> {
  const account = await db.query<{ id: string }>(
    "INSERT INTO accounts (id, name, currency) VALUES (gen_random_uuid(), 'r', 'USD') RETURNING id",
  );
  const message = await db.query<{ id: string }>(
    `INSERT INTO messages (id, account_id, "to", body, sender_id, operator, encoding, segments, charge, charge_currency,
                           status, billing, received_at, created_at, accepted_at)
     VALUES (gen_random_uuid(), $1, '+263771234567', 'x', 'SHIRI', 'econet', 'gsm7', 1, 450, 'USD',
             'success', 'captured', now(), now(), now()) RETURNING id`,
    [account.rows[0]?.id],
  );
  const id = message.rows[0]?.id;
  if (!id) throw new Error("no message inserted");
  await db.query(
    "INSERT INTO message_parts (message_id, part_no, link, smsc_id) VALUES ($1, 1, 'econet', $2)",
    [id, smscId],
  );
  return id;
}
