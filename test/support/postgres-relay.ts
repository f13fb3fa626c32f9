import net from "node:net";

export interface PostgresRelay {
  /** The database's URL through the relay. */
  url: string;
  /** Cuts as an outage does, ending the connections it relays. */
  cut(how: "closing" | "silent"): void;
  /** Relays again (new connections; those cut stay cut). */
  mend(): void;
  close(): Promise<void>;
}

/**
 * A TCP relay to Postgres that can be cut the ways an outage cuts: "closing" accepts and closes
 * at once (a container's published port while its Postgres is down), "silent" accepts and never
 * answers (a network cut). Cutting ends the connections it relays.
 */
export async function relayTo(url: string): Promise<PostgresRelay> {
  const target = new URL(url);
  let mode: "relay" | "closing" | "silent" = "relay";
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
