import type { Pool } from "../../src/db/pool.ts";
import { waitFor } from "./wait-for.ts";

export interface SettledEvent {
  id: string;
  state: string;
  attempts: number;
  last_status: number | null;
}

/** The callback events of these messages, once there are `count` and each is settled (delivered or failed). */
export async function settledEvents(
  pool: Pool,
  messageIds: string[],
  count: number,
): Promise<SettledEvent[]> {
  let rows: SettledEvent[] = [];
  await waitFor(
    async () => {
      ({ rows } = await pool.query<SettledEvent>(
        "SELECT id, state, attempts, last_status FROM webhook_events WHERE message_id = ANY ($1) ORDER BY id",
        [messageIds],
      ));
      return rows.length === count && rows.every((r) => r.state !== "pending");
    },
    { timeoutMs: 30_000, what: `${count} events settled` },
  );
  return rows;
}
