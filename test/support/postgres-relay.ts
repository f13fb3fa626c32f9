import net from "node:net";

export interface PostgresRelay {
  /** The database's URL through the relay. */
  url: string;
  /** Cuts as an outage does, ending the connections it relays. */
  cut(how: "closing" | "silent"): void;
  /**
   * Loses the answer to the `nth` simple-query COMMIT from now (1: the next): Postgres gets the
   * COMMIT and commits, and its connection is cut before the answer reaches the client, as when a
   * connection drops just then. The client cannot know whether its transaction committed.
   */
  loseCommitAnswer(nth: number): void;
  /** Relays again (new connections; those cut stay cut). */
  mend(): void;
  close(): Promise<void>;
}

/** A simple query of "COMMIT": 'Q', its length (4 + 7), the text with its NUL. */
const SIMPLE_COMMIT = Buffer.concat([Buffer.from([0x51, 0, 0, 0, 11]), Buffer.from("COMMIT\0", "latin1")]);

/**
 * A TCP relay to Postgres that can be cut the ways an outage cuts: "closing" accepts and closes
 * at once (a container's published port while its Postgres is down), "silent" accepts and never
 * answers (a network cut). Cutting ends the connections it relays.
 */
export async function relayTo(url: string): Promise<PostgresRelay> {
  const target = new URL(url);
  let mode: "relay" | "closing" | "silent" = "relay";
  let commitsUntilLoss = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    client.on("error", () => {});
    open.add(client);
    client.on("close", () => open.delete(client));
    if (mode === "closing") return client.destroy();
    if (mode === "silent") return;
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream).pipe(client);
    client.on("data", (chunk: Buffer) => {
      if (commitsUntilLoss === 0 || !chunk.includes(SIMPLE_COMMIT)) return;
      if (--commitsUntilLoss > 0) return;
      // pipe's own listener has already written the chunk upstream: its answer goes nowhere.
      upstream.unpipe(client);
      setTimeout(() => client.destroy(), 200);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const relayed = new URL(url);
  relayed.hostname = "127.0.0.1";
  relayed.port = String((server.address() as net.AddressInfo).port);
  return {
    url: relayed.toString(),
    cut(how) {
      mode = how;
      for (const socket of open) socket.destroy();
    },
    loseCommitAnswer(nth) {
      commitsUntilLoss = nth;
    },
    mend() {
      mode = "relay";
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
