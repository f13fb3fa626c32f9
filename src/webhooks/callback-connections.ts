import net, { type LookupFunction } from "node:net";
import tls from "node:tls";
import { ResponseReader } from "./http-response-reader.ts";

/**
 * The worker's HTTP/1.1 connections to callback receivers, kept alive between requests, and the
 * exchange of one request for its answer on them (docs/decisions/0028: node's http client cost
 * about three times this per request). One request at a time a connection; no pipelining, no
 * redirects, no proxies, no HTTP/2.
 */

/** Where a request goes. */
export interface Origin {
  secure: boolean;
  /** A name, or an IP literal without brackets. */
  host: string;
  port: number;
  /** The TLS server name (SNI, and the name the certificate must carry); none for IP literals. */
  servername: string | undefined;
}

/** What came back: the final status (the body may still be arriving), or why there is none. */
export type Answer = { status: number } | { status: null; error: Error; timedOut: boolean };

/**
 * An idle connection is dropped after this long: under the 5 s keep-alive timeout of node's
 * server (and most others), so that receivers rarely close one just as a request goes out.
 */
export const IDLE_MS = 4_000;
/** Idle connections kept per origin beyond which returned ones are closed (as http.Agent's default). */
const MAX_IDLE_PER_ORIGIN = 256;
const SWEEP_MS = 1_000;

export function callbackConnections(): CallbackConnections {
  return new CallbackConnections();
}

export class CallbackConnections {
  /** Idle connections by origin and lookup, most recently used last (LIFO: the warm ones). */
  private readonly idle = new Map<string, Connection[]>();
  private readonly open = new Set<Connection>();
  private sweeper: NodeJS.Timeout | null = null;
  private shut = false;

  /**
   * Writes `request` (head and body, as they go on the wire) to `origin` and resolves with the
   * final status as soon as it is read; the rest of the response is read and dropped after. The
   * timeout runs from now: at it the connection is destroyed, answered or not. Never rejects.
   */
  exchange(origin: Origin, lookup: LookupFunction | undefined, request: string, timeoutMs: number) {
    return new Promise<Answer>((resolve) => {
      const key = `${lookupId(lookup)} ${origin.secure ? "https" : "http"} ${origin.host} ${origin.port}`;
      new Exchange(this, key, origin, lookup, request, timeoutMs, resolve).start(this.take(key));
    });
  }

  /** Once close() is called: no request is retried on a new connection after it. */
  get closed(): boolean {
    return this.shut;
  }

  /** Closes every connection, idle or busy; those in use after this are closed when done. */
  close(): void {
    this.shut = true;
    for (const connection of this.open) connection.socket.destroy();
    this.open.clear();
    this.idle.clear();
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** A new connection; the socket is writable at once (net and TLS queue until connected). */
  connect(key: string, origin: Origin, lookup: LookupFunction | undefined): Connection {
    // The lookup is the address guard: it judges the addresses this very socket connects to.
    const options = { host: origin.host, port: origin.port, noDelay: true, ...(lookup ? { lookup } : {}) };
    const socket = origin.secure
      ? tls.connect({ ...options, servername: origin.servername, ALPNProtocols: ["http/1.1"] })
      : net.connect(options);
    const connection = new Connection(socket, this, key);
    this.open.add(connection);
    return connection;
  }

  /** The most recently idled connection to `key` that is still fresh, taken out of the pool. */
  private take(key: string): Connection | undefined {
    const list = this.idle.get(key);
    if (!list) return undefined;
    const freshSince = Date.now() - IDLE_MS;
    for (let connection = list.pop(); connection; connection = list.pop()) {
      if (connection.idleSince > freshSince && !connection.socket.destroyed) {
        connection.socket.ref();
        return connection;
      }
      connection.socket.destroy();
    }
    return undefined;
  }

  /** Takes back a connection whose response was read to its end. */
  give(connection: Connection): void {
    let list = this.idle.get(connection.key);
    if (!list) {
      list = [];
      this.idle.set(connection.key, list);
    }
    if (this.shut || list.length >= MAX_IDLE_PER_ORIGIN) {
      connection.socket.destroy();
      return;
    }
    connection.idleSince = Date.now();
    // An idle connection holds no process open.
    connection.socket.unref();
    list.push(connection);
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
      this.sweeper.unref();
    }
  }

  /** The socket closed: it is neither open nor idle any more. */
  forget(connection: Connection): void {
    this.open.delete(connection);
    const list = this.idle.get(connection.key);
    const at = list ? list.indexOf(connection) : -1;
    if (list && at >= 0) list.splice(at, 1);
  }

  /** Closes connections idle too long: one timer a pool, not one a request. */
  private sweep(): void {
    const freshSince = Date.now() - IDLE_MS;
    for (const [key, list] of this.idle) {
      // Oldest first: each list is in the order its connections went idle.
      while (list.length > 0 && (list[0] as Connection).idleSince <= freshSince)
        (list.shift() as Connection).socket.destroy();
      if (list.length === 0) this.idle.delete(key);
    }
    if (this.idle.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }
}

/** A number for each lookup (the guard in use): a connection made under one is not used under another. */
const lookupIds = new WeakMap<LookupFunction, number>();
let lookups = 0;
function lookupId(lookup: LookupFunction | undefined): number {
  if (!lookup) return 0;
  let id = lookupIds.get(lookup);
  if (id === undefined) {
    id = ++lookups;
    lookupIds.set(lookup, id);
  }
  return id;
}

/** One socket and the exchange on it, if any: its listeners are set once, not per request. */
class Connection {
  exchange: Exchange | null = null;
  idleSince = 0;
  private failure: Error | null = null;

  constructor(
    readonly socket: net.Socket,
    pool: CallbackConnections,
    readonly key: string,
  ) {
    socket.on("data", (chunk: Buffer) => {
      if (this.exchange) this.exchange.read(chunk);
      // Bytes nobody asked for: the connection is out of step.
      else socket.destroy();
    });
    // 'close' follows every 'error'; the error is kept to say why.
    socket.on("error", (err: Error) => {
      this.failure ??= err;
    });
    socket.on("close", () => {
      pool.forget(this);
      const exchange = this.exchange;
      this.exchange = null;
      exchange?.gone(this.failure);
    });
  }
}

class Exchange {
  private connection: Connection | null = null;
  private reused = false;
  private answered = false;
  private heardBack = false;
  private readonly reader = new ResponseReader();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pool: CallbackConnections,
    private readonly key: string,
    private readonly origin: Origin,
    private readonly lookup: LookupFunction | undefined,
    private readonly request: string,
    private readonly timeoutMs: number,
    private readonly resolve: (answer: Answer) => void,
  ) {
    // A plain timer, not an AbortSignal (docs/decisions/0027); unref'd, as it holds nothing open.
    this.timer = setTimeout(() => this.timeUp(), timeoutMs);
    this.timer.unref();
  }

  /** On an idle connection if there is one, else a new one. */
  start(idle: Connection | undefined): void {
    this.reused = idle !== undefined;
    const connection = idle ?? this.pool.connect(this.key, this.origin, this.lookup);
    this.connection = connection;
    connection.exchange = this;
    // Head and body in one write: one segment for a small callback.
    connection.socket.write(this.request);
  }

  read(chunk: Buffer): void {
    this.heardBack = true;
    const progress = this.reader.push(chunk);
    const status = this.reader.status;
    if (!this.answered && status !== null) this.answer({ status });
    if (progress === "more") return;
    if (progress === "malformed" && !this.answered)
      this.answer({
        status: null,
        error: new Error(`malformed response: ${this.reader.error}`),
        timedOut: false,
      });
    this.release(progress === "done" && this.reader.reusable && this.reader.leftover === 0);
  }

  /** The connection closed under this exchange, `failure` saying why if it failed. */
  gone(failure: Error | null): void {
    this.connection = null;
    if (!this.answered && this.reused && !this.heardBack && !this.pool.closed) {
      // The receiver closed the idle connection as the request went out (its keep-alive timeout
      // met ours). Once more on a new connection: if the receiver did take the first request,
      // it gets the event twice, which callbacks allow (at least once, each signed with its
      // event id for receivers to tell repeats).
      this.start(undefined);
      return;
    }
    this.settle();
    // A body read until close ends here; anything else cut short has its status or an error.
    if (this.reader.end() !== "done")
      this.answer({ status: null, error: failure ?? hangUp(), timedOut: false });
  }

  private timeUp(): void {
    const connection = this.connection;
    this.connection = null;
    if (connection) {
      connection.exchange = null;
      connection.socket.destroy();
    }
    const error = new Error(`no answer within ${this.timeoutMs} ms`);
    this.answer({ status: null, error, timedOut: true });
  }

  /** The response was read to its end (or could not be): the connection goes back or is closed. */
  private release(reusable: boolean): void {
    const connection = this.connection;
    this.connection = null;
    this.settle();
    if (!connection) return;
    connection.exchange = null;
    if (reusable) this.pool.give(connection);
    else connection.socket.destroy();
  }

  private settle(): void {
    clearTimeout(this.timer);
  }

  private answer(answer: Answer): void {
    if (this.answered) return;
    this.answered = true;
    this.resolve(answer);
  }
}

/** As node's http client says it when the connection closes before an answer. */
function hangUp(): Error {
  return Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
}
