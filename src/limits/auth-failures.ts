import { isIP } from "node:net";
import type { Queryable } from "../db/pool.ts";

/** How long after its last flush a process forgets its addresses' counts (a window and a bit). */
const WINDOW_MS = 60_000;
/** How soon a failure is added to the shared count: the flood of one address, batched. */
const FLUSH_MS = 250;

/**
 * Failed authentications per client address, across API processes: each process counts its own,
 * adds them to auth_failures once every FLUSH_MS in one statement (however many failed), and learns
 * from that statement each address's total over every process this minute. An address whose total
 * reaches the limit is refused (429) for the rest of the minute without a key lookup, in every
 * process that has seen it fail. Between flushes a process adds its own failures to the total it
 * last heard, so a burst into one process is refused at the limit, not a flush later. A minute's
 * window, fixed: simple to reason about, and the statement stays one upsert. 0 turns it off.
 */
export class AuthFailureGuard {
  private pending = new Map<string, number>();
  /** Addresses refused until the end of their window (ms since the epoch). */
  private readonly refused = new Map<string, number>();
  /** Each address's total over every process at the last flush, and when its window ends. */
  private readonly heard = new Map<string, { failures: number; until: number }>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private flushes = 0;

  constructor(
    private readonly db: Queryable,
    private readonly limitPerMinute: number,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** Seconds until the address may try again, or 0 when it may now. */
  refusedFor(address: string): number {
    if (this.limitPerMinute === 0) return 0;
    const until = this.refused.get(plain(address));
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left <= 0) {
      this.refused.delete(plain(address));
      return 0;
    }
    return Math.ceil(left / 1000);
  }

  failed(address: string): void {
    if (this.limitPerMinute === 0) return;
    const key = plain(address);
    if (isIP(key) === 0) return;
    const pending = (this.pending.get(key) ?? 0) + 1;
    this.pending.set(key, pending);
    const now = Date.now();
    const last = this.heard.get(key);
    const window = last !== undefined && last.until > now ? last : { failures: 0, until: endOfMinute(now) };
    if (window.failures + pending >= this.limitPerMinute) this.refused.set(key, window.until);
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.flushing = this.flushing.then(() => this.flush());
    }, FLUSH_MS);
  }

  /** Adds the counts waiting to the shared ones; for tests and shutdown too. */
  async flush(): Promise<void> {
    const taken = this.pending;
    this.pending = new Map();
    if (taken.size === 0) return;
    try {
      const { rows } = await this.db.query<{ address: string; failures: number; ends_in_ms: number }>({
        name: "shiri_auth_failures",
        text: `INSERT INTO auth_failures (address, window_start, failures)
               SELECT a, date_trunc('minute', now()), n FROM unnest($1::inet[], $2::int[]) AS u(a, n)
               ON CONFLICT (address, window_start) DO UPDATE SET failures = auth_failures.failures + EXCLUDED.failures
               RETURNING host(address) AS address, failures,
                         extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now())::float8 * 1000
                           AS ends_in_ms`,
        values: [[...taken.keys()], [...taken.values()]],
      });
      const now = Date.now();
      for (const r of rows) {
        this.heard.set(r.address, { failures: r.failures, until: now + r.ends_in_ms });
        if (r.failures >= this.limitPerMinute) this.refused.set(r.address, now + r.ends_in_ms);
      }
      // Past windows go now and then: the table stays a minute or two of addresses.
      if (++this.flushes % 20 === 0)
        await this.db.query("DELETE FROM auth_failures WHERE window_start < now() - interval '2 minutes'");
    } catch (err) {
      this.onError(err);
    }
    for (const [address, until] of this.refused)
      if (until + WINDOW_MS < Date.now()) this.refused.delete(address);
    for (const [address, { until }] of this.heard) if (until < Date.now()) this.heard.delete(address);
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing;
    await this.flush();
  }
}

/** When the minute of `now` ends, by this process's clock (the database's decides at the flush). */
function endOfMinute(now: number): number {
  return (Math.floor(now / WINDOW_MS) + 1) * WINDOW_MS;
}

/** An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d: the same address. */
function plain(address: string): string {
  return address.startsWith("::ffff:") ? address.slice(7) : address;
}
