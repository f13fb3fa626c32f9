import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { systemResolve } from "../../src/webhooks/address-guard.ts";
import {
  type CallbackConnections,
  callbackConnections,
  IDLE_MS,
} from "../../src/webhooks/callback-connections.ts";
import { type PostOptions, postCallback } from "../../src/webhooks/post-callback.ts";

/**
 * Shiri's own HTTP/1.1 client for callbacks, against real servers over loopback: node's http
 * server, raw sockets answering as a misbehaving receiver would, Python's http.server (an HTTP
 * implementation that is not node's), and TLS with a self-signed certificate.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const connections = callbackConnections();
const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
afterAll(() => connections.close());

const options = (extra: Partial<PostOptions> = {}): PostOptions => ({
  timeoutMs: 2_000,
  allowPrivate: true,
  connections,
  ...extra,
});
let events = 0;
const callback = (url: string) => ({
  url,
  events: [{ id: `e${++events}`, type: "message.delivered" }],
  batched: false,
  body: JSON.stringify({ id: `e${events}`, type: "message.delivered", text: "héllo" }),
  secrets: ["s"],
});

/** A node http server on loopback, counting its connections; closed after the test. */
async function nodeServer(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handle);
  const counts = { connections: 0, closed: 0 };
  server.on("connection", (socket) => {
    counts.connections++;
    socket.on("close", () => counts.closed++);
  });
  await listen(server);
  closers.push(() => stop(server));
  return { server, counts, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function listen(server: Server | net.Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
}

function stop(server: Server): Promise<unknown> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
}

/** A raw TCP server: `onRequest` gets each connection's n-th request (from 1) as it arrives. */
async function rawServer(onRequest: (socket: net.Socket, n: number, request: string) => void) {
  const counts = { connections: 0, requests: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    counts.connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let n = 0;
    let buffered = "";
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      // Each request is a head and a Content-Length body: enough for our own client's requests.
      for (;;) {
        const end = buffered.indexOf("\r\n\r\n");
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const request = buffered.slice(0, end + 4 + length);
        buffered = buffered.slice(end + 4 + length);
        counts.requests++;
        onRequest(socket, ++n, request);
      }
    });
    socket.on("error", () => {});
  });
  await listen(server);
  closers.push(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return { counts, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const ok = (_req: IncomingMessage, res: ServerResponse) => {
  _req.resume();
  _req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok"));
};

describe("callbacks over kept-alive connections", () => {
  it("sends 50 callbacks one after another on one connection to a keep-alive server", async () => {
    const rx = await nodeServer(ok);
    for (let i = 0; i < 50; i++)
      expect(await postCallback(callback(`${rx.url}/hook`), options())).toEqual({
        kind: "delivered",
        status: 200,
      });
    expect(rx.counts.connections).toBe(1);
  });

  it("sends the request node's client would: line, Host, credentials, headers and body", async () => {
    let seen: { method?: string; url?: string; headers?: IncomingMessage["headers"]; body?: string } = {};
    const rx = await nodeServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (d: string) => {
        body += d;
      });
      req.on("end", () => {
        seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
        res.writeHead(204).end();
      });
    });
    const port = new URL(rx.url).port;
    const cb = callback(`http://us%20er:p%40ss@127.0.0.1:${port}/hooks/in?x=1&y=%20`);
    expect(await postCallback(cb, options())).toEqual({ kind: "delivered", status: 204 });
    expect(seen.method).toBe("POST");
    expect(seen.url).toBe("/hooks/in?x=1&y=%20");
    expect(seen.body).toBe(cb.body);
    expect(seen.headers).toMatchObject({
      host: `127.0.0.1:${port}`,
      authorization: `Basic ${Buffer.from("us er:p@ss").toString("base64")}`,
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(cb.body)),
      "user-agent": "Shiri-Webhooks/1",
      "shiri-event-id": cb.events[0]?.id,
      "shiri-event-type": "message.delivered",
      "shiri-signature": expect.stringMatching(/^t=\d+,v1=[0-9a-f]{64}$/),
    });
    // A batch carries its count instead of one event's id and type.
    await postCallback({ ...cb, batched: true, body: `[${cb.body}]` }, options());
    expect(seen.headers?.["shiri-event-count"]).toBe("1");
    expect(seen.headers?.["shiri-event-id"]).toBeUndefined();
  });

  it("does not reuse a connection made under one address guard under another", async () => {
    const rx = await nodeServer(ok);
    const url = `http://localhost:${new URL(rx.url).port}/`;
    const viaResolver = options({ resolve: (host, _family, cb) => systemResolve(host, 4, cb) });
    await postCallback(callback(url), options());
    await postCallback(callback(url), viaResolver);
    await postCallback(callback(url), options());
    await postCallback(callback(url), viaResolver);
    expect(rx.counts.connections).toBe(2);
  });

  it("closes a connection idle for longer than IDLE_MS", async () => {
    const rx = await nodeServer(ok);
    await postCallback(callback(rx.url), options());
    expect(rx.counts.closed).toBe(0);
    await new Promise((r) => setTimeout(r, IDLE_MS + 1_500));
    expect(rx.counts.closed).toBe(1);
  }, 10_000);

  it("loses no callback to a server whose keep-alive timeout is shorter than our idle time", async () => {
    let received = 0;
    const rx = await nodeServer((req, res) => {
      received++;
      ok(req, res);
    });
    // Node's own keep-alive timeout has a second's grace added (node 20): this one closes an idle
    // connection at 60 ms sharp, as a stricter receiver or proxy might.
    rx.server.keepAliveTimeout = 0;
    rx.server.on("connection", (socket: net.Socket) => socket.setTimeout(60, () => socket.destroy()));
    const outcomes = [];
    // Gaps around the server's timeout: some requests meet a connection it is just closing.
    for (let i = 0; i < 30; i++) {
      outcomes.push(await postCallback(callback(rx.url), options()));
      await new Promise((r) => setTimeout(r, 45 + (i % 7) * 5));
    }
    expect(outcomes.every((o) => o.kind === "delivered")).toBe(true);
    expect(received).toBeGreaterThanOrEqual(30);
    expect(rx.counts.connections).toBeGreaterThan(1);
  });

  it("tries once more on a new connection when a reused one closes before any answer", async () => {
    // The idle race, made certain: the server hangs up on each connection's second request.
    const rx = await rawServer((socket, n) => {
      if (n === 2) socket.destroy();
      else socket.write("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
    });
    expect(await postCallback(callback(rx.url), options())).toEqual({ kind: "delivered", status: 200 });
    expect(await postCallback(callback(rx.url), options())).toEqual({ kind: "delivered", status: 200 });
    expect(rx.counts).toEqual({ connections: 2, requests: 3 });
  });

  it("does not try again when a new connection closes before any answer", async () => {
    const rx = await rawServer((socket) => socket.destroy());
    expect(await postCallback(callback(rx.url), options())).toEqual({
      kind: "retry",
      status: null,
      error: "ECONNRESET: socket hang up",
    });
    expect(rx.counts).toEqual({ connections: 1, requests: 1 });
  });

  it("reads chunked responses, trailers included, and keeps the connection", async () => {
    const rx = await nodeServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(202, { "content-type": "text/plain", trailer: "x-checksum" });
        res.write("accepted ");
        setImmediate(() => {
          res.write("and more");
          res.addTrailers({ "x-checksum": "abc" });
          res.end();
        });
      });
    });
    for (let i = 0; i < 20; i++)
      expect(await postCallback(callback(rx.url), options())).toEqual({ kind: "delivered", status: 202 });
    expect(rx.counts.connections).toBe(1);
  });

  it("answers at the status when the body stalls, and then drops that connection", async () => {
    const rx = await nodeServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-length": "100" });
        res.write("only part of it");
      });
    });
    const started = Date.now();
    const outcome = await postCallback(callback(rx.url), options({ timeoutMs: 500 }));
    expect(outcome).toEqual({ kind: "delivered", status: 200 });
    expect(Date.now() - started).toBeLessThan(400);
    // The first connection is still reading its body: the next callback needs another one.
    await postCallback(callback(rx.url), options({ timeoutMs: 500 }));
    expect(rx.counts.connections).toBe(2);
    // At the timeout each stalled connection is dropped, never reused.
    await new Promise((r) => setTimeout(r, 700));
    expect(rx.counts.closed).toBe(2);
    await postCallback(callback(rx.url), options({ timeoutMs: 300 }));
    expect(rx.counts.connections).toBe(3);
  });

  it("gives up on a server that never answers, on a reused connection too", async () => {
    let calls = 0;
    const rx = await nodeServer((req, res) => {
      if (++calls === 1) ok(req, res);
    });
    expect(await postCallback(callback(rx.url), options())).toEqual({ kind: "delivered", status: 200 });
    expect(await postCallback(callback(rx.url), options({ timeoutMs: 200 }))).toEqual({
      kind: "retry",
      status: null,
      error: "no answer within 200 ms",
      timedOut: true,
    });
    expect(rx.counts.connections).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(rx.counts.closed).toBe(1);
  });

  it.each([
    ["garbage", "SSH-2.0-OpenSSH_9.6\r\n", "malformed response: not an HTTP/1.x response"],
    [
      "an oversize head",
      `HTTP/1.1 200 ${"x".repeat(20_000)}`,
      "malformed response: response head over 16384 bytes",
    ],
  ])("retries a receiver answering %s, and drops its connection", async (_name, answer, error) => {
    const rx = await rawServer((socket) => socket.write(answer));
    expect(await postCallback(callback(rx.url), options())).toEqual({ kind: "retry", status: null, error });
    await postCallback(callback(rx.url), options());
    expect(rx.counts.connections).toBe(2);
  });

  it("skips 100 Continue and 103 Early Hints for the final answer", async () => {
    const rx = await rawServer((socket) =>
      socket.write(
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n" +
          "HTTP/1.1 410 Gone\r\ncontent-length: 0\r\n\r\n",
      ),
    );
    expect(await postCallback(callback(rx.url), options())).toEqual({
      kind: "failed",
      status: 410,
      error: "receiver answered 410",
    });
  });
});

/** Python's http.server, HTTP/1.0 or 1.1, on loopback; GET answers the connections it has seen. */
const SERVER = `
import sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

connections = 0
lock = threading.Lock()

class Handler(BaseHTTPRequestHandler):
    protocol_version = sys.argv[1]
    # The head and the body go in two writes: without this, Nagle holds the body for our ACK.
    disable_nagle_algorithm = True
    def setup(self):
        global connections
        with lock:
            connections += 1
        super().setup()
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = b"ok"
        self.send_response(201)
        if self.protocol_version == "HTTP/1.1":
            self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        body = str(connections).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
`;

async function python(version: "HTTP/1.0" | "HTTP/1.1") {
  const child: ChildProcess = spawn("python3", ["-c", SERVER, version], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  closers.push(() => child.kill());
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout?.once("data", (d: Buffer) => resolve(d.toString().trim()));
    child.once("exit", (code) => reject(new Error(`python3 exited ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const connectionsSeen = () =>
    new Promise<number>((resolve, reject) =>
      get(url, (res) => {
        let text = "";
        res.on("data", (d) => {
          text += d;
        });
        res.on("end", () => resolve(Number(text)));
      }).on("error", reject),
    );
  return { url, connectionsSeen };
}

describe("a job's callbacks pipelined on its own connection", () => {
  const answer = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
  /** Sends `count` callbacks as a job does: up to `depth` of them before their answers. */
  async function asJob(
    url: string,
    count: number,
    depth: number,
    extra: Partial<PostOptions> = {},
    pool: CallbackConnections = connections,
  ) {
    const job = pool.forJob(depth);
    const outcomes: Array<Promise<unknown>> = [];
    const inFlight: Array<Promise<unknown>> = [];
    try {
      for (let i = 0; i < count; i++) {
        const outcome = postCallback(callback(url), options({ connections: job, ...extra }));
        outcomes.push(outcome);
        inFlight.push(outcome);
        if (inFlight.length >= depth) await inFlight.shift();
      }
      return await Promise.all(outcomes);
    } finally {
      job.release();
    }
  }
  const delivered = { kind: "delivered", status: 200 };
  /** The event ids of the requests a raw server got, in order. */
  const idOf = (request: string) => /shiri-event-id: (\S+)/.exec(request)?.[1];

  it("writes up to the depth before any answer, once the receiver kept the connection open", async () => {
    // Answers nothing until it holds four requests at once: only pipelined requests get answers.
    let waiting = 0;
    const rx = await rawServer((socket, n) => {
      if (n === 1) return void socket.write(answer);
      if (++waiting < 4) return;
      for (; waiting > 0; waiting--) socket.write(answer);
    });
    expect(await asJob(rx.url, 9, 4, { timeoutMs: 1_000 })).toEqual(Array(9).fill(delivered));
    expect(rx.counts).toEqual({ connections: 1, requests: 9 });
  });

  it("keeps one connection and the job's order on node's server, and gives it back after", async () => {
    const order: string[] = [];
    const rx = await nodeServer((req, res) => {
      order.push(String(req.headers["shiri-event-id"]));
      ok(req, res);
    });
    const first = events + 1;
    expect(await asJob(`${rx.url}/hook`, 200, 16)).toEqual(Array(200).fill(delivered));
    expect(order).toEqual(Array.from({ length: 200 }, (_, i) => `e${first + i}`));
    expect(rx.counts.connections).toBe(1);
    // Released, the connection serves the next request, pipelined or not.
    expect(await postCallback(callback(rx.url), options())).toEqual(delivered);
    expect(rx.counts.connections).toBe(1);
  });

  it("sends what the receiver did not take again when it answers connection: close", async () => {
    const taken: string[] = [];
    const rx = await rawServer((socket, n, request) => {
      // Its third answer says close: the requests written behind it are not taken.
      if (n > 3) return;
      taken.push(idOf(request) as string);
      if (n < 3) socket.write(answer);
      else socket.end("HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    });
    const first = events + 1;
    expect(await asJob(rx.url, 12, 8)).toEqual(Array(12).fill(delivered));
    // Each taken once and in order, three a connection.
    expect(taken).toEqual(Array.from({ length: 12 }, (_, i) => `e${first + i}`));
    expect(rx.counts.connections).toBe(4);
  });

  it("stops pipelining to a receiver that hangs up on a pipelined request, losing none", async () => {
    // Takes one request at a time: one that comes while another is unanswered makes it hang up.
    const answered: string[] = [];
    const unanswered = new WeakSet<net.Socket>();
    let hangUps = 0;
    const rx = await rawServer((socket, _n, request) => {
      if (socket.destroyed) return;
      if (unanswered.has(socket)) {
        hangUps++;
        socket.destroy();
        return;
      }
      unanswered.add(socket);
      setTimeout(() => {
        if (socket.destroyed) return;
        unanswered.delete(socket);
        answered.push(idOf(request) as string);
        socket.write(answer);
      }, 5);
    });
    const first = events + 1;
    const told: string[] = [];
    const pool = callbackConnections({
      pipeliningStopped: (origin) => told.push(`${origin.host}:${origin.port}`),
    });
    closers.push(() => pool.close());
    expect(await asJob(rx.url, 10, 4, {}, pool)).toEqual(Array(10).fill(delivered));
    expect(hangUps).toBe(1);
    expect(told).toEqual([new URL(rx.url).host]);
    // The requests unanswered went again, on a new connection, one at a time from then on.
    expect(answered).toEqual(Array.from({ length: 10 }, (_, i) => `e${first + i}`));
    expect(rx.counts.connections).toBe(2);
    expect(await asJob(rx.url, 6, 4, {}, pool)).toEqual(Array(6).fill(delivered));
    expect(hangUps).toBe(1);
    expect(answered).toHaveLength(16);
    expect(told).toHaveLength(1);
  });

  it("answers every request behind one that got no answer with its timeout, then stops pipelining", async () => {
    // Answers a connection's first request only, at once; the next connection's, after 5 ms each.
    let connection = 0;
    let piled = 0;
    const unanswered = new WeakSet<net.Socket>();
    const rx = await rawServer((socket, n) => {
      if (n === 1) connection++;
      if (connection === 1) {
        if (n === 1) socket.write(answer);
        return;
      }
      if (unanswered.has(socket)) piled++;
      unanswered.add(socket);
      setTimeout(() => {
        unanswered.delete(socket);
        socket.write(answer);
      }, 5);
    });
    const started = Date.now();
    const outcomes = await asJob(rx.url, 5, 4, { timeoutMs: 300 });
    expect(outcomes[0]).toEqual(delivered);
    for (const outcome of outcomes.slice(1))
      expect(outcome).toEqual({
        kind: "retry",
        status: null,
        error: "no answer within 300 ms",
        timedOut: true,
      });
    // One timeout for the four written together, not one after another.
    expect(Date.now() - started).toBeLessThan(900);
    expect(rx.counts).toEqual({ connections: 1, requests: 5 });
    // The origin is then sent one request at a time: none arrives while another is unanswered.
    expect(await asJob(rx.url, 6, 4)).toEqual(Array(6).fill(delivered));
    expect(piled).toBe(0);
    expect(rx.counts.connections).toBe(2);
  });

  it("on a new connection that gets no answer, the requests not yet written come back unsent", async () => {
    // Never answers: on a new connection only the first request goes out before an answer.
    const rx = await rawServer(() => {});
    const outcomes = await asJob(rx.url, 4, 4, { timeoutMs: 300 });
    expect(outcomes).toEqual([
      { kind: "retry", status: null, error: "no answer within 300 ms", timedOut: true },
      ...Array(3).fill({ kind: "unsent", status: null }),
    ]);
    // Not sent again elsewhere: the receiver saw one request, on one connection.
    expect(rx.counts).toEqual({ connections: 1, requests: 1 });
  });

  it("pipelines to Python's HTTP/1.1 server, an implementation that is not node's", async () => {
    const py = await python("HTTP/1.1");
    const job = connections.forJob(8);
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () =>
          postCallback(callback(`${py.url}/hook`), options({ connections: job })),
        ),
      );
      expect(outcomes).toEqual(Array(8).fill({ kind: "delivered", status: 201 }));
      const more = await Promise.all(
        Array.from({ length: 8 }, () =>
          postCallback(callback(`${py.url}/hook`), options({ connections: job })),
        ),
      );
      expect(more).toEqual(Array(8).fill({ kind: "delivered", status: 201 }));
    } finally {
      job.release();
    }
    // All sixteen on one connection, and the count's own request.
    expect(await py.connectionsSeen()).toBe(2);
  });
});

describe("callbacks to Python's http.server", () => {
  it("delivers to an HTTP/1.0 server, a connection per request (read until close)", async () => {
    const py = await python("HTTP/1.0");
    for (let i = 0; i < 10; i++)
      expect(await postCallback(callback(`${py.url}/hook`), options())).toEqual({
        kind: "delivered",
        status: 201,
      });
    // Ten callbacks and the count's own request.
    expect(await py.connectionsSeen()).toBe(11);
  });

  it("delivers to an HTTP/1.1 server on one kept-alive connection", async () => {
    const py = await python("HTTP/1.1");
    for (let i = 0; i < 10; i++) {
      expect(await postCallback(callback(`${py.url}/hook`), options())).toEqual({
        kind: "delivered",
        status: 201,
      });
      // Python writes the head and the body apart, and the answer is the status: a callback sent
      // before the body is in takes a second connection, the first being still busy.
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await py.connectionsSeen()).toBe(2);
  });
});

describe("callbacks over TLS", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "shiri-tls-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function selfSigned() {
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
        ...["-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"), "-days", "1"],
        ...["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
      ],
      { stdio: "ignore" },
    );
    const counts = { connections: 0, alpn: [] as Array<string | false | null> };
    const server = createHttpsServer(
      { key: readFileSync(path.join(dir, "key.pem")), cert: readFileSync(path.join(dir, "cert.pem")) },
      ok,
    );
    server.on("secureConnection", (socket) => {
      counts.connections++;
      counts.alpn.push(socket.alpnProtocol);
    });
    await listen(server);
    closers.push(() => stop(server));
    return { counts, port: (server.address() as AddressInfo).port };
  }

  /**
   * Runs `body` (with callbackConnections and postCallback imported) in a child process that trusts
   * the test's certificate, as a process reads its trusted CAs at start; resolves with its stdout.
   */
  function trustingChild(name: string, body: string, args: readonly string[]): Promise<string> {
    const script = path.join(dir, name);
    writeFileSync(
      script,
      `import { callbackConnections } from ${JSON.stringify(path.join(ROOT, "src/webhooks/callback-connections.ts"))};
import { postCallback } from ${JSON.stringify(path.join(ROOT, "src/webhooks/post-callback.ts"))};
${body}`,
    );
    return new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
        cwd: ROOT,
        env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(dir, "cert.pem") },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
      });
      child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
    });
  }

  it("refuses a receiver whose certificate is not trusted, to retry later", async () => {
    const rx = await selfSigned();
    const outcome = await postCallback(callback(`https://localhost:${rx.port}/hook`), options());
    expect(outcome).toMatchObject({
      kind: "retry",
      status: null,
      error: expect.stringMatching(/SELF_SIGNED|self-signed/),
    });
  });

  it("delivers once the certificate is trusted, by name and by IP literal, reusing the connection", async () => {
    const rx = await selfSigned();
    const urls = [
      `https://localhost:${rx.port}/a`,
      `https://localhost:${rx.port}/b`,
      `https://127.0.0.1:${rx.port}/c`,
    ];
    const output = await trustingChild(
      "post.mts",
      `const connections = callbackConnections();
const opts = { timeoutMs: 5000, allowPrivate: true, connections };
const cb = (url: string) => ({ url, events: [{ id: "e1", type: "message.delivered" }], batched: false, body: "{}", secrets: ["s"] });
const outcomes = [];
for (const url of process.argv.slice(2)) outcomes.push(await postCallback(cb(url), opts));
connections.close();
console.log(JSON.stringify(outcomes));
`,
      urls,
    );
    expect(JSON.parse(output)).toEqual([
      { kind: "delivered", status: 200 },
      { kind: "delivered", status: 200 },
      { kind: "delivered", status: 200 },
    ]);
    // localhost twice on one connection; the IP literal is another origin.
    expect(rx.counts.connections).toBe(2);
    expect(rx.counts.alpn).toEqual(["http/1.1", "http/1.1"]);
  }, 20_000);

  it("pipelines a job's callbacks over TLS on one connection", async () => {
    const rx = await selfSigned();
    const output = await trustingChild(
      "pipelined.mts",
      `const connections = callbackConnections();
const job = connections.forJob(8);
const opts = { timeoutMs: 5000, allowPrivate: true, connections: job };
const cb = (i: number) => ({ url: process.argv[2] as string, events: [{ id: "e" + i, type: "message.delivered" }], batched: false, body: "{}", secrets: ["s"] });
const first = await postCallback(cb(0), opts);
const rest = await Promise.all(Array.from({ length: 8 }, (_, i) => postCallback(cb(i + 1), opts)));
job.release();
connections.close();
console.log(JSON.stringify([first, ...rest]));
`,
      [`https://localhost:${rx.port}/p`],
    );
    expect(JSON.parse(output)).toEqual(Array(9).fill({ kind: "delivered", status: 200 }));
    expect(rx.counts.connections).toBe(1);
  }, 20_000);
});
