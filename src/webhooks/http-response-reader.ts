/**
 * Reads one HTTP/1.x response off a connection, byte chunk by byte chunk, as a callback needs it:
 * the final status, then where the response ends (RFC 9112 §6.3) and whether the connection may
 * carry another request. The body itself is counted, never kept. Pure: no sockets, no timers.
 */

/** How far a response has been read: more bytes needed, all of it, or something off the wire. */
export type Progress = "more" | "done" | "malformed";

/** Bytes a response head (status line and headers, or the trailers) may take. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** A chunk-size line is a few hex digits and perhaps an extension: more than this is not HTTP. */
const MAX_CHUNK_LINE = 1024;

/** Where the reader is in a response (plain numbers: no enum for tsx and the build to agree on). */
const State = {
  Head: 0,
  Length: 1,
  ChunkSize: 2,
  ChunkData: 3,
  ChunkDataEnd: 4,
  Trailers: 5,
  UntilClose: 6,
  Done: 7,
  Malformed: 8,
} as const;
type State = (typeof State)[keyof typeof State];

const STATUS_LINE = /^HTTP\/1\.(\d) ([1-9]\d\d)(?:[ \t].*)?$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/;
const DIGITS = /^\d{1,15}$/;
const CR = 13;
const LF = 10;

export class ResponseReader {
  /** The final response's status, from the moment its status line is read (1xx are skipped). */
  status: number | null = null;
  /** Once done: whether the connection may carry another request. */
  reusable = false;
  /** Once malformed: what was wrong, for the log. */
  error = "";
  /** Once done: bytes of the last chunk after the response's end (a server speaking out of turn). */
  leftover = 0;

  private state: State = State.Head;
  /** Head (or trailer, or chunk-size line) text not yet ended, latin1: one character a byte. */
  private pending = "";
  private trailerBytes = 0;
  /** Body bytes still to come: of the Content-Length, or of the current chunk. */
  private remaining = 0;
  private sawCR = false;

  /** Reads the next bytes the connection gave. */
  push(chunk: Buffer): Progress {
    let at = 0;
    while (at < chunk.length) {
      switch (this.state) {
        case State.Head: {
          const next = this.readHead(chunk, at);
          if (next < 0) return this.error ? "malformed" : "more";
          at = next;
          break;
        }
        case State.Length: {
          const take = Math.min(this.remaining, chunk.length - at);
          this.remaining -= take;
          at += take;
          if (this.remaining === 0) this.state = State.Done;
          break;
        }
        case State.UntilClose:
          return "more";
        case State.ChunkSize: {
          const newline = chunk.indexOf(LF, at);
          const end = newline < 0 ? chunk.length : newline;
          this.pending += chunk.toString("latin1", at, end);
          if (this.pending.length > MAX_CHUNK_LINE) return this.fail("chunk size line too long");
          if (newline < 0) return "more";
          at = newline + 1;
          const line = withoutCR(this.pending);
          this.pending = "";
          const size = CHUNK_SIZE.exec(line);
          if (!size) return this.fail("bad chunk size line");
          this.remaining = Number.parseInt(size[1] as string, 16);
          this.state = this.remaining === 0 ? State.Trailers : State.ChunkData;
          break;
        }
        case State.ChunkData: {
          const take = Math.min(this.remaining, chunk.length - at);
          this.remaining -= take;
          at += take;
          if (this.remaining === 0) {
            this.state = State.ChunkDataEnd;
            this.sawCR = false;
          }
          break;
        }
        case State.ChunkDataEnd: {
          const byte = chunk[at++];
          if (byte === LF) this.state = State.ChunkSize;
          else if (byte === CR && !this.sawCR) this.sawCR = true;
          else return this.fail("chunk data not followed by CRLF");
          break;
        }
        case State.Trailers: {
          const newline = chunk.indexOf(LF, at);
          const end = newline < 0 ? chunk.length : newline;
          this.trailerBytes += end - at + 1;
          if (this.trailerBytes > MAX_HEAD_BYTES) return this.fail("trailers too large");
          this.pending += chunk.toString("latin1", at, end);
          if (newline < 0) return "more";
          at = newline + 1;
          const line = withoutCR(this.pending);
          this.pending = "";
          if (line === "") this.state = State.Done;
          else if (!isField(line)) return this.fail("bad trailer line");
          break;
        }
        case State.Done:
          this.leftover = chunk.length - at;
          return "done";
        case State.Malformed:
          return "malformed";
      }
    }
    if (this.state === State.Done) return "done";
    return this.state === State.Malformed ? "malformed" : "more";
  }

  /** The connection closed: the end of a body that runs until close, else a cut-off response. */
  end(): Progress {
    if (this.state === State.UntilClose || this.state === State.Done) {
      this.state = State.Done;
      return "done";
    }
    return this.state === State.Malformed
      ? "malformed"
      : this.fail("connection closed before the response ended");
  }

  /** Reads head bytes from `at`: the offset after the head once it is whole, else -1. */
  private readHead(chunk: Buffer, at: number): number {
    const prior = this.pending.length;
    // No more than a head's worth is turned into text, however much body came with it.
    const upTo = Math.min(chunk.length, at + MAX_HEAD_BYTES + 4 - prior);
    const text =
      prior > 0 ? this.pending + chunk.toString("latin1", at, upTo) : chunk.toString("latin1", at, upTo);
    if (this.status === null && !couldBeHttp(text)) {
      this.fail("not an HTTP/1.x response");
      return -1;
    }
    const end = blankLine(text, prior > 2 ? prior - 2 : 0);
    if (end < 0 || end > MAX_HEAD_BYTES) {
      // Only the final status line is worth reading early: the outcome needs nothing else.
      const lineEnd = this.status === null ? text.indexOf("\n") : -1;
      if (lineEnd >= 0 && !this.readStatusLine(withoutCR(text.slice(0, lineEnd)))) return -1;
      if (end > 0 || text.length > MAX_HEAD_BYTES) {
        this.fail(`response head over ${MAX_HEAD_BYTES} bytes`);
        return -1;
      }
      this.pending = text;
      return -1;
    }
    this.pending = "";
    if (!this.readHeadText(text.slice(0, text.lastIndexOf("\n", end - 2)))) return -1;
    return at + end - prior;
  }

  /** Judges a status line: false (and malformed) if it is not one. Sets the status if final. */
  private readStatusLine(line: string): boolean {
    const parts = STATUS_LINE.exec(line);
    if (!parts) {
      this.fail("bad status line");
      return false;
    }
    const status = Number(parts[2]);
    if (status >= 200 || status === 101) this.status = status;
    return true;
  }

  /** A whole head, without its blank line: sets the framing of what follows. */
  private readHeadText(head: string): boolean {
    const lines = head.split("\n");
    const statusLine = withoutCR(lines[0] as string);
    const parts = STATUS_LINE.exec(statusLine);
    if (!parts) {
      this.fail("bad status line");
      return false;
    }
    const minor = Number(parts[1]);
    const status = Number(parts[2]);
    let length: number | null = null;
    let codings: string[] | null = null;
    let close = false;
    let keepAlive = false;
    for (let i = 1; i < lines.length; i++) {
      const line = withoutCR(lines[i] as string);
      const colon = line.indexOf(":");
      // Obsolete line folding (a line starting with whitespace) is refused with the rest.
      if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) {
        this.fail("bad header line");
        return false;
      }
      const value = line.slice(colon + 1).trim();
      switch (line.slice(0, colon).toLowerCase()) {
        case "content-length":
          for (const item of value.split(",")) {
            const digits = item.trim();
            if (!DIGITS.test(digits)) {
              this.fail("bad content-length");
              return false;
            }
            const n = Number(digits);
            if (length !== null && length !== n) {
              this.fail("conflicting content-lengths");
              return false;
            }
            length = n;
          }
          break;
        case "transfer-encoding":
          codings ??= [];
          for (const item of value.split(",")) {
            const coding = item.trim().toLowerCase();
            if (coding) codings.push(coding);
          }
          break;
        case "connection":
          for (const item of value.split(",")) {
            const option = item.trim().toLowerCase();
            if (option === "close") close = true;
            else if (option === "keep-alive") keepAlive = true;
          }
          break;
      }
    }
    if (status < 200 && status !== 101) {
      // Informational (100 Continue, 103 Early Hints): the final response follows on this connection.
      this.state = State.Head;
      return true;
    }
    this.status = status;
    const persistent = minor >= 1 ? !close : keepAlive && !close;
    if (status === 101) {
      // Switching protocols, unasked: whatever follows is not HTTP.
      this.reusable = false;
      this.state = State.Done;
    } else if (status === 204 || status === 304) {
      this.reusable = persistent;
      this.state = State.Done;
    } else if (codings !== null && codings.length > 0) {
      // HTTP/1.0 has no transfer codings: its framing is not to be trusted (RFC 9112 §6.1). Chunked
      // beside a Content-Length is a smuggling sign: read as chunked, then close.
      const chunked = minor >= 1 && codings[codings.length - 1] === "chunked";
      this.state = chunked ? State.ChunkSize : State.UntilClose;
      this.reusable = chunked && persistent && length === null;
    } else if (length !== null) {
      this.remaining = length;
      this.reusable = persistent;
      this.state = length === 0 ? State.Done : State.Length;
    } else {
      this.reusable = false;
      this.state = State.UntilClose;
    }
    return true;
  }

  private fail(error: string): "malformed" {
    this.state = State.Malformed;
    this.error = error;
    this.reusable = false;
    return "malformed";
  }
}

/** Whether `text` can still begin "HTTP/1.": garbage is refused at once, not after 16 KiB. */
function couldBeHttp(text: string): boolean {
  const prefix = "HTTP/1.";
  const n = Math.min(text.length, prefix.length);
  return text.slice(0, n) === prefix.slice(0, n);
}

/** The offset just after the first empty line (LF or CRLF ended) at or after `from`, else -1. */
function blankLine(text: string, from: number): number {
  let newline = text.indexOf("\n", from);
  while (newline >= 0) {
    const next = text.charCodeAt(newline + 1);
    if (next === LF) return newline + 2;
    if (next === CR && text.charCodeAt(newline + 2) === LF) return newline + 3;
    newline = text.indexOf("\n", newline + 1);
  }
  return -1;
}

function withoutCR(line: string): string {
  return line.charCodeAt(line.length - 1) === CR ? line.slice(0, -1) : line;
}

function isField(line: string): boolean {
  const colon = line.indexOf(":");
  return colon > 0 && TOKEN.test(line.slice(0, colon));
}
