import pg from "pg";
import { connectionOptions, type DatabaseTimeouts } from "./pool.ts";

/** Reconnection waits: doubling from the first to the last, then the last again. */
const RECONNECT_MS = [250, 500, 1_000, 2_000, 5_000];
/**
 * A connection that vanished without a word (no FIN: a network cut) is found by a query this
 * often; a server restart or pg_terminate_backend ends the connection at once and needs no query.
 */
const HEARTBEAT_MS = 30_000;

export interface Listening {
  stop(): Promise<void>;
}

/**
 * One connection of its own that LISTENs on `channel` for as long as the process runs: outside
 * the pool (a pooled connection would be handed to others), reconnecting with back-off after the
 * database restarts or the connection drops. `onListening` runs each time LISTEN is in place, the
 * first time and after every reconnect: what was announced in between was missed, so the caller
 * looks once. Resolves once the first LISTEN is in place (it keeps trying until then).
 */
export async function listenOn(
  connectionString: string,
  timeouts: DatabaseTimeouts | undefined,
  channel: string,
  handlers: { onNotify(payload: string): void; onListening(): void; onError(err: unknown): void },
): Promise<Listening> {
  let stopped = false;
  let client: pg.Client | null = null;
  let heartbeat: NodeJS.Timeout | null = null;
  let retry: NodeJS.Timeout | null = null;
  let attempt = 0;
  let firstListen: (() => void) | null = null;
  const listening = new Promise<void>((resolve) => {
    firstListen = resolve;
  });

  const drop = (target: pg.Client, err: unknown) => {
    if (client !== target) return;
    client = null;
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
    target.removeAllListeners("notification");
    target.end().catch(() => {});
    if (stopped) return;
    handlers.onError(err);
    const wait = RECONNECT_MS[Math.min(attempt, RECONNECT_MS.length - 1)] as number;
    attempt++;
    retry = setTimeout(() => {
      retry = null;
      void connect();
    }, wait);
  };

  const connect = async () => {
    if (stopped) return;
    const next = new pg.Client({
      connectionString,
      application_name: "shiri-listener",
      ...(timeouts ? connectionOptions(timeouts) : {}),
    });
    client = next;
    // While connecting, the connect's own failure says why; pg emits 'end' before that failure
    // reaches us, so a drop there would report the end in words no one knows for an outage
    // (src/db/pool.ts, isDatabaseOutOfReach) and the outage log would show every reconnect.
    let connected = false;
    next.on("error", (err) => drop(next, err));
    next.on("end", () => {
      if (connected) drop(next, new Error("listening connection terminated"));
    });
    next.on("notification", (msg) => {
      if (msg.channel === channel) handlers.onNotify(msg.payload ?? "");
    });
    try {
      await next.connect();
      connected = true;
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      drop(
        next,
        connectTimedOut(err) ? new Error("listening connection: connection timeout", { cause: err }) : err,
      );
      return;
    }
    if (client !== next || stopped) return;
    attempt = 0;
    heartbeat = setInterval(() => {
      next.query("SELECT 1").catch((err: unknown) => drop(next, err));
    }, HEARTBEAT_MS);
    heartbeat.unref();
    handlers.onListening();
    firstListen?.();
    firstListen = null;
  };

  await connect();
  await listening;
  return {
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      if (heartbeat) clearInterval(heartbeat);
      const last = client;
      client = null;
      await last?.end().catch(() => {});
    },
  };
}

/**
 * pg's Client says its own connect timeout (connectionTimeoutMillis) in two words only; a pool
 * says it in words of its own (pg-pool), which isDatabaseOutOfReach knows.
 */
function connectTimedOut(err: unknown): boolean {
  return err instanceof Error && err.message === "timeout expired";
}
