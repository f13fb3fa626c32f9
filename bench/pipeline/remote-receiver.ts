/**
 * The bench's tally of the callbacks taken by the load process's own receiver
 * (bench/peers/callback-server.ts): the same figures as webhook-receiver.ts, kept from the
 * arrivals the load process streams over IPC, so the run's loop and its completeness check read
 * it as they read a receiver in this process.
 */
import { type LoadControl, type LoadMessage, loadMessageSchema } from "../peers/load-protocol.ts";
import type { PeerProcess } from "./peer-process.ts";
import type { WebhookReceiver } from "./webhook-receiver.ts";

export interface RemoteReceiver extends WebhookReceiver {
  /** When each id's request was sent (wall ms), from its dlr-url (Kannel's reports). */
  sentAt: Map<string, number>;
  /** The load process may send its load now. */
  start(): void;
}

/**
 * Waits for the load process (started with `receiver` in its plan) to announce its receiver,
 * then keeps the tally. `delivered` holds the arrivals of `deliveredType` ("message.delivered"
 * for Shiri's webhook, "1" for a Kannel report of a delivered message); other types are counted
 * in byType. Every other message of the load process goes to `onMessage`.
 */
export async function remoteReceiver(
  load: PeerProcess,
  deliveredType: string,
  onMessage: (message: LoadMessage) => void,
  timeoutMs = 30_000,
): Promise<RemoteReceiver> {
  const tally = {
    delivered: new Map<string, number[]>(),
    sentAt: new Map<string, number>(),
    byType: new Map<string, number>(),
    requests: 0,
    badSignatures: 0,
    unreadable: 0,
  };
  let announced: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => {
    announced = resolve;
  });
  load.child.on("message", (raw: unknown) => {
    const m = loadMessageSchema.parse(raw);
    if (m.type === "receiver") return announced(m.url);
    if (m.type !== "callbacks") return onMessage(m);
    tally.requests += m.requests;
    tally.badSignatures += m.badSignatures;
    tally.unreadable += m.unreadable;
    for (const [type, id, at, sent] of m.arrivals) {
      tally.byType.set(type, (tally.byType.get(type) ?? 0) + 1);
      if (id === null || type !== deliveredType) continue;
      if (sent !== null) tally.sentAt.set(id, sent);
      const times = tally.delivered.get(id);
      if (times) times.push(at);
      else tally.delivered.set(id, [at]);
    }
  });
  const control = (message: LoadControl) => load.child.send(message);
  const timer = new Promise<never>((_, reject) =>
    setTimeout(
      () => reject(new Error(`the load process did not start its receiver:\n${load.output()}`)),
      timeoutMs,
    ).unref(),
  );
  return Object.assign(tally, {
    url: await Promise.race([url, timer]),
    setSecret(secret: string | null) {
      control({ type: "secret", secret });
    },
    reset() {
      control({ type: "reset" });
      tally.delivered.clear();
      tally.sentAt.clear();
      tally.byType.clear();
      tally.requests = 0;
      tally.badSignatures = 0;
      tally.unreadable = 0;
    },
    start() {
      control({ type: "start" });
    },
    // The load process stops with it (its "disconnect"), which the run's cleanup does.
    stop: async () => {},
  });
}
