import { EventEmitter } from "node:events";
import net from "node:net";
import { isResponse, type Pdu } from "./pdu.ts";
import { decodePdu, encodePdu, HEADER_BYTES, PduBodyError } from "./pdu-codec.ts";

/**
 * The largest PDU read; a longer command_length is a framing error. SMPP 3.4 sets no limit, but a
 * deliver_sm's message_payload TLV holds up to 65,535 octets (65,539 with its tag and length),
 * its mandatory fields under 400 and the header 16: 70,000 leaves room for its other TLVs.
 * (node-smpp's 16,384 dropped well-formed long MOs, and with them the answers behind them.)
 */
export const MAX_PDU_BYTES = 70_000;
const LAST_SEQUENCE_NUMBER = 0x7fffffff;

/**
 * One TCP connection to an SMSC, cut into PDUs decoded and encoded by pdu-codec.ts: connect, send
 * with sequence numbers, close, destroy; "connect", "pdu", "invalid" (a PduBodyError: the PDU's
 * header read, its body not; the stream reads on), "error" (after which nothing more is read)
 * and "close" events.
 */
export class SmppWire extends EventEmitter {
  readonly socket: net.Socket;
  private sequence = 0;
  /** Bytes received and not yet a whole PDU. */
  private partial: Buffer = Buffer.alloc(0);
  /** After a framing error nothing more is read: the connection is to be dropped. */
  private broken = false;

  constructor(options: { host: string; port: number }) {
    super();
    this.socket = net.connect(options);
    this.socket.on("connect", () => this.emit("connect"));
    this.socket.on("data", (chunk: Buffer) => this.receive(chunk));
    this.socket.on("error", (error) => this.emit("error", error));
    this.socket.on("close", () => this.emit("close"));
  }

  /**
   * False (and nothing written) when the socket is not writable. Numbers a request that has no
   * number yet, from 1 up to 2^31 - 1 and round again. Throws when the PDU cannot be encoded.
   */
  send(pdu: Pdu, sent?: () => void): boolean {
    if (!this.socket.writable) return false;
    if (!isResponse(pdu) && !pdu.sequence_number) {
      if (this.sequence === LAST_SEQUENCE_NUMBER) this.sequence = 0;
      pdu.sequence_number = ++this.sequence;
    }
    const bytes = encodePdu(pdu);
    this.socket.write(bytes, sent && (() => sent()));
    return true;
  }

  /** Ends the socket gracefully. */
  close(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    if (this.broken) return;
    let bytes = this.partial.length === 0 ? chunk : Buffer.concat([this.partial, chunk]);
    while (bytes.length >= 4) {
      const length = bytes.readUInt32BE(0);
      if (length < HEADER_BYTES || length > MAX_PDU_BYTES) {
        this.fail(new Error(`PDU length was out of bounds (${length}, 16 to ${MAX_PDU_BYTES})`));
        return;
      }
      if (bytes.length < length) break;
      const whole = bytes.subarray(0, length);
      bytes = bytes.subarray(length);
      let pdu: Pdu;
      try {
        pdu = decodePdu(whole);
      } catch (error) {
        if (!(error instanceof PduBodyError)) {
          this.fail(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        this.emit("invalid", error);
        if (this.broken) return;
        continue;
      }
      this.emit("pdu", pdu);
      if (this.broken) return;
    }
    this.partial = bytes;
  }

  private fail(error: Error): void {
    this.broken = true;
    this.partial = Buffer.alloc(0);
    this.emit("error", error);
  }
}
