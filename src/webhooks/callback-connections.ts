import net, { type LookupFunction } from "node:net";
import tls from "node:tls";
import { ResponseReader } from "./http-response-reader.ts";

/**
 * The worker's HTTP/1.1 connections to callback receivers, kept alive between requests, and the
 * exchange of one request for its answer on them (docs/decisions/0028: node's http client cost
 * about three times this per request). No redirects, no proxies, no HTTP/2. A connection carries
 * one request at a time, except within a job's own connections (`forJob`), which may pipeline up
 * to a depth of requests on a connection once its receiver has kept it open after an answer
 * (docs/decisions/0030).
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

/**
 * What came back: the final status (the body may still be arriving), or why there is none;
 * `unsent` when the request was never written, as one ahead of it on its connection got no answer.
 */
export type Answer =
  | { status: number }
  | { status: null; error: Error; timedOut: boolean }
  | { status: null; error: Error; unsent: true };

/** What sends a request and resolves with its answer: the shared pool, or a job's connections. */
export interface Exchanger {
  /**
   * Writes `request` (head and body, as they go on the wire) to `origin` and resolves with the
   * final status as soon as it is read; the rest of the response is read and dropped after. The
   * timeout runs from the moment the answer is the next one due on its connection: then the
   * connection is destroyed, answered or not. Never rejects.
   */
  exchange(
    origin: Origin,
    lookup: LookupFunction | undefined,
    request: string,
    timeoutMs: number,
  ): Promise<Answer>;
}

/**
 * An idle connection is dropped after this long: under the 5 s keep-alive timeout of node's
 * server (and most others), so that receivers rarely close one just as a request goes out.
 */
export const IDLE_MS = 4_000;
/** Idle connections kept per origin beyond which returned ones are closed (as http.Agent's default). */
const MAX_IDLE_PER_ORIGIN = 256;
const SWEEP_MS = 1_000;
/**
 * How long an origin is not pipelined to after it closed a connection with pipelined requests
 * unanswered and unannounced, or let one time out with pipelined requests behind it: a receiver
 * that may not take pipelining gets one request at a time.
 */
export const NO_PIPELINING_MS = 10 * 60_000;
const MAX_UNPIPELINED = 1000;

export interface ConnectionEvents {
  /** An origin left pipelined requests unanswered: it is sent one request at a time for a while. */
  pipeliningStopped?: (origin: Origin) => void;
}

export function callbackConnections(events: ConnectionEvents = {}): CallbackConnections {
  return new CallbackConnections(events);
}

export class CallbackConnections implements Exchanger {
  /** Idle connections by origin and lookup, most recently used last (LIFO: the warm ones). */
  private readonly idle = new Map<string, Connection[]>();
  private readonly open = new Set<Connection>();
  /** Origins (by key) not pipelined to until the time given. */
  private readonly unpipelined = new Map<string, number>();
  private sweeper: NodeJS.Timeout | null = null;
  private shut = false;

  constructor(private readonly events: ConnectionEvents = {}) {}

  exchange(origin: Origin, lookup: LookupFunction | undefined, request: string, timeoutMs: number) {
    const key = keyOf(origin, lookup);
    return exchangeOn(request, timeoutMs, (exchange, fresh) => {
      const idle = fresh ? undefined : this.take(key);
      (idle ?? this.connect(key, origin, lookup, 1)).add(exchange);
    });
  }

  /**
   * Connections of one job's own: each request of the job to an origin goes on the job's one
   * connection to it, up to `depth` of them written before their answers. Given back to the
   * pool by `release`, once the job is done.
   */
  forJob(depth: number): JobConnections {
    return new JobConnections(this, depth);
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
  connect(key: string, origin: Origin, lookup: LookupFunction | undefined, depth: number): Connection {
    // The lookup is the address guard: it judges the addresses this very socket connects to.
    const options = { host: origin.host, port: origin.port, noDelay: true, ...(lookup ? { lookup } : {}) };
    const socket = origin.secure
      ? tls.connect({ ...options, servername: origin.servername, ALPNProtocols: ["http/1.1"] })
      : net.connect(options);
    const connection = new Connection(socket, this, key, origin, this.depthFor(key, depth));
    this.open.add(connection);
    return connection;
  }

  /** The most recently idled connection to `key` that is still fresh, taken out of the pool. */
  take(key: string, depth = 1): Connection | undefined {
    const list = this.idle.get(key);
    if (!list) return undefined;
    const freshSince = Date.now() - IDLE_MS;
    for (let connection = list.pop(); connection; connection = list.pop()) {
      if (connection.idleSince > freshSince && !connection.socket.destroyed) {
        connection.socket.ref();
        connection.depth = this.depthFor(key, depth);
        return connection;
      }
      connection.socket.destroy();
    }
    return undefined;
  }

  /** Takes back a connection whose responses were read to their end. */
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

  /** The depth asked for, or 1 while `key` is not pipelined to. */
  private depthFor(key: string, depth: number): number {
    return depth > 1 && this.pipelines(key) ? depth : 1;
  }

  /** Whether requests to `key` may be pipelined. */
  private pipelines(key: string): boolean {
    const until = this.unpipelined.get(key);
    if (until === undefined) return true;
    if (until > Date.now()) return false;
    this.unpipelined.delete(key);
    return true;
  }

  /** The origin left pipelined requests unanswered: one at a time for a while. */
  stopPipelining(key: string, origin: Origin): void {
    const now = Date.now();
    // Bounded, as origins come from clients: the lapsed ones go first.
    if (this.unpipelined.size >= MAX_UNPIPELINED)
      for (const [other, until] of this.unpipelined) if (until <= now) this.unpipelined.delete(other);
    if (this.unpipelined.size >= MAX_UNPIPELINED) this.unpipelined.clear();
    this.unpipelined.set(key, now + NO_PIPELINING_MS);
    this.events.pipeliningStopped?.(origin);
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

/**
 * A job's connections, one an origin, held from its first request to `release`: a job's
 * requests go to its receiver one behind another on one connection, as without pipelining, so
 * a receiver sees no more connections at once than jobs sending to it.
 */
export class JobConnections implements Exchanger {
  private readonly byKey = new Map<string, Connection>();

  constructor(
    private readonly pool: CallbackConnections,
    private readonly depth: number,
  ) {}

  exchange(origin: Origin, lookup: LookupFunction | undefined, request: string, timeoutMs: number) {
    const key = keyOf(origin, lookup);
    return exchangeOn(request, timeoutMs, (exchange, fresh) =>
      this.place(exchange, fresh, key, origin, lookup),
    );
  }

  /** The job is done: its idle connections go back to the pool, the busy ones when done. */
  release(): void {
    for (const connection of this.byKey.values()) connection.unpin();
    this.byKey.clear();
  }

  private place(
    exchange: Exchange,
    fresh: boolean,
    key: string,
    origin: Origin,
    lookup: LookupFunction | undefined,
  ): void {
    let connection = this.byKey.get(key);
    if (!connection || connection.socket.destroyed) {
      const idle = fresh ? undefined : this.pool.take(key, this.depth);
      connection = idle ?? this.pool.connect(key, origin, lookup, this.depth);
      connection.pinned = true;
      this.byKey.set(key, connection);
    }
    connection.add(exchange);
  }
}

/** A new exchange, put on a connection by `place` (and again by it, should it need another). */
function exchangeOn(
  request: string,
  timeoutMs: number,
  place: (exchange: Exchange, fresh: boolean) => void,
): Promise<Answer> {
  return new Promise((resolve) => place(new Exchange(request, timeoutMs, resolve, place), false));
}

function keyOf(origin: Origin, lookup: LookupFunction | undefined): string {
  return `${lookupId(lookup)} ${origin.secure ? "https" : "http"} ${origin.host} ${origin.port}`;
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

/**
 * One socket and the exchanges on it, in the order their requests go out and their answers come
 * back: the first `written` of them are on the wire. Its listeners are set once, not per request.
 */
class Connection {
  private readonly queue: Exchange[] = [];
  private written = 0;
  /**
   * Its receiver answered a request and kept the connection open: it may be pipelined to, and a
   * request written now goes on a reused connection (see Exchange.gone).
   */
  private proven = false;
  /** The answer due next ran out of time. */
  private timedOut: Error | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failure: Error | null = null;
  /** The socket is corked until the end of this tick (see write). */
  private corked = false;
  /** Held by a job: not given back to the pool when its queue runs dry. */
  pinned = false;
  idleSince = 0;

  constructor(
    readonly socket: net.Socket,
    private readonly pool: CallbackConnections,
    readonly key: string,
    private readonly origin: Origin,
    /** Requests written before their answers, at most, once proven. */
    public depth: number,
  ) {
    socket.on("data", (chunk: Buffer) => this.read(chunk));
    // 'close' follows every 'error'; the error is kept to say why.
    socket.on("error", (err: Error) => {
      this.failure ??= err;
    });
    socket.on("close", () => this.closed());
  }

  add(exchange: Exchange): void {
    this.queue.push(exchange);
    this.write();
  }

  /**
   * Writes what may go out now: the first request, and once proven, up to `depth` of them. The
   * requests of one tick (a job's next ones, as a burst of answers frees their places) leave in
   * one socket write, as the SMPP session's PDUs do; head and body in one write, never apart.
   */
  private write(): void {
    const limit = this.proven ? this.depth : 1;
    while (this.written < this.queue.length && this.written < limit) {
      const exchange = this.queue[this.written] as Exchange;
      this.written++;
      exchange.written = true;
      exchange.reused = this.proven;
      if (this.written > 1 && !this.corked) {
        this.corked = true;
        this.socket.cork();
        process.nextTick(() => {
          this.corked = false;
          this.socket.uncork();
        });
      }
      this.socket.write(exchange.request);
    }
    this.time();
  }

  /** The answer due next has its own timeout, from when it is due. */
  private time(): void {
    const head = this.queue[0];
    if (this.timer || !head || this.written === 0) return;
    this.timer = setTimeout(() => this.timeUp(head), head.timeoutMs);
    // A plain timer, not an AbortSignal (docs/decisions/0027); unref'd, as it holds nothing open.
    this.timer.unref();
  }

  private read(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0) {
      const head = this.queue[0];
      // Bytes nobody asked for: the connection is out of step.
      if (!head || this.written === 0) {
        this.socket.destroy();
        return;
      }
      head.heardBack = true;
      const progress = head.reader.push(rest);
      const status = head.reader.status;
      if (status !== null) head.answer({ status });
      if (progress === "more") return;
      if (progress === "malformed") {
        head.answer({
          status: null,
          error: new Error(`malformed response: ${head.reader.error}`),
          timedOut: false,
        });
        this.socket.destroy();
        return;
      }
      this.done();
      if (!head.reader.reusable) {
        // The receiver closes after this answer: it takes none of the requests behind it.
        this.end();
        return;
      }
      this.proven = true;
      rest = rest.subarray(rest.length - head.reader.leftover);
    }
    if (this.queue.length > 0) this.write();
    else this.rest();
  }

  /** The answer due next was read to its end. */
  private done(): void {
    this.queue.shift();
    this.written--;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Nothing due: back to the pool, unless a job holds it. */
  private rest(): void {
    if (!this.pinned) this.pool.give(this);
  }

  /** The job holding it is done. */
  unpin(): void {
    this.pinned = false;
    if (this.queue.length === 0 && !this.socket.destroyed) this.pool.give(this);
  }

  /** Takes no more: what is queued behind goes on another connection, and this one closes. */
  private end(): void {
    const behind = this.queue.splice(0);
    this.written = 0;
    this.socket.destroy();
    for (const exchange of behind) exchange.again(false);
  }

  private timeUp(head: Exchange): void {
    this.timer = null;
    this.timedOut = new Error(`no answer within ${head.timeoutMs} ms`);
    this.socket.destroy();
  }

  private closed(): void {
    this.pool.forget(this);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // Pipelined requests unanswered: the receiver may not take pipelining (it hung up, or it sat
    // on them), so its origin gets one request at a time for a while.
    if (this.written > 1 && !this.pool.closed) this.pool.stopPipelining(this.key, this.origin);
    for (const exchange of this.queue.splice(0)) {
      // Behind a request that got no answer, those written waited out the same timeout; those
      // not written never reached the receiver, and do not go to it again now that it hangs.
      if (this.timedOut && exchange.written)
        exchange.answer({ status: null, error: this.timedOut, timedOut: true });
      else if (this.timedOut) exchange.answer({ status: null, error: this.timedOut, unsent: true });
      else exchange.gone(this.failure, this.pool.closed);
    }
  }
}

/** One request and its answer, wherever it is placed. */
class Exchange {
  /** On the wire, on its present connection. */
  written = false;
  /** Written on a connection that had carried a request before. */
  reused = false;
  heardBack = false;
  private answered = false;
  private tries = 0;
  reader = new ResponseReader();

  constructor(
    readonly request: string,
    readonly timeoutMs: number,
    private readonly resolve: (answer: Answer) => void,
    /** Puts it on a connection: a new one if `fresh`, else the one its requests go on. */
    private readonly place: (exchange: Exchange, fresh: boolean) => void,
  ) {}

  /** Not taken by the receiver (it closed first, or said it would): on another connection. */
  again(fresh: boolean): void {
    if (this.answered) return;
    this.written = false;
    this.heardBack = false;
    this.reader = new ResponseReader();
    this.place(this, fresh);
  }

  /** The connection closed under this exchange, `failure` saying why if it failed. */
  gone(failure: Error | null, shut: boolean): void {
    // Never sent: it goes out on the next connection like any other.
    const unsent = !this.written;
    // Or the receiver closed the connection as the request went out (its keep-alive timeout met
    // ours, or it takes no pipelining). Once more on a new connection: if the receiver did take
    // the first request, it gets the event twice, which callbacks allow (at least once, each
    // signed with its event id for receivers to tell repeats).
    const unheard = this.reused && !this.heardBack && this.tries === 0;
    if (!this.answered && !shut && (unsent || unheard)) {
      if (!unsent) this.tries++;
      this.again(!unsent);
      return;
    }
    // A body read until close ends here; anything else cut short has its status or an error.
    if (this.reader.end() !== "done")
      this.answer({ status: null, error: failure ?? hangUp(), timedOut: false });
  }

  answer(answer: Answer): void {
    if (this.answered) return;
    this.answered = true;
    this.resolve(answer);
  }
}

/** As node's http client says it when the connection closes before an answer. */
function hangUp(): Error {
  return Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
}
