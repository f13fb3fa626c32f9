import { EventEmitter } from "node:events";
import net from "node:net";
import type { PDU } from "smpp";
import { decodePdu, encodePdu, encodeSubmitSm, HEADER_BYTES, type SubmitSmFields } from "./pdu-codec.ts";

/** node-smpp's PDU.maxLength: a longer command_length is a framing error. */
const MAX_PDU_BYTES = 16_384;
const LAST_SEQUENCE_NUMBER = 0x7fffffff;

/** A submit_sm given by its fields, encoded by pdu-codec.ts when it is written. */
export class OutgoingSubmit {
  readonly command = "submit_sm";
  /** Set when written (0 until then). */
  sequence_number = 0;
  constructor(readonly fields: SubmitSmFields) {}
}

export type Outgoing = PDU | OutgoingSubmit;

/**
 * One TCP connection to an SMSC, cut into PDUs: what session.ts used of node-smpp's Session
 * (connect, send with sequence numbers, close, destroy; "connect", "pdu", "error" and "close"
 * events), with the PDUs decoded and encoded by pdu-codec.ts.
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

  /** False (and nothing written) when the socket is not writable. Numbers requests as node-smpp does. */
  send(pdu: Outgoing, sent?: () => void): boolean {
    if (!this.socket.writable) return false;
    const submit = pdu instanceof OutgoingSubmit;
    if ((submit || !pdu.isResponse()) && !pdu.sequence_number) {
      if (this.sequence === LAST_SEQUENCE_NUMBER) this.sequence = 0;
      pdu.sequence_number = ++this.sequence;
    }
    const bytes = submit ? encodeSubmitSm(pdu.fields, pdu.sequence_number) : encodePdu(pdu);
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
      let pdu: PDU;
      try {
        pdu = decodePdu(bytes.subarray(0, length));
      } catch (error) {
        this.fail(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      bytes = bytes.subarray(length);
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
