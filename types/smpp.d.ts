/**
 * Ambient types for node-smpp 0.5.1 (no @types package exists). Covers only what Shiri uses.
 * PDU body fields and TLVs are own properties named after the SMPP field; values read off the
 * wire are typed `unknown` on purpose, so callers narrow them instead of trusting the peer.
 */
declare module "smpp" {
  import type { EventEmitter } from "node:events";
  import type { Server as NetServer, Socket } from "node:net";

  /** What node-smpp's message filter yields for a received short_message / message_payload. */
  export interface DecodedShortMessage {
    /** Decoded by data_coding (GSM 03.38 for 0, UCS-2 for 8); a Buffer for unknown codings. */
    message: string | Buffer;
    /** User data header split into information elements: [IEI, length, ...data]. */
    udh?: Buffer[];
  }

  /** What node-smpp accepts for short_message: the library prepends `udh` and sets the UDHI bit. */
  export type OutgoingShortMessage = Buffer | string | { udh?: Buffer; message: Buffer | string };

  /** Options for building a PDU: header fields plus any body field or TLV by its SMPP name. */
  export interface PduOptions {
    command_status?: number;
    sequence_number?: number;
    short_message?: OutgoingShortMessage;
    [field: string]: unknown;
  }

  export class PDU {
    constructor(command: string, options?: PduOptions);
    /** A whole PDU off the wire, command_length included. */
    constructor(bytes: Buffer);
    command: string;
    command_id: number;
    command_length: number;
    command_status: number;
    sequence_number: number;
    isResponse(): boolean;
    /** The matching *_resp (generic_nack for unknown commands) with this PDU's sequence_number. */
    response(options?: PduOptions): PDU;
    toBuffer(): Buffer;
    [field: string]: unknown;
  }

  export type ResponseCallback = (pdu: PDU) => void;
  type Shortcut = (options?: PduOptions, onResponse?: ResponseCallback, onSent?: ResponseCallback) => boolean;

  export class Session extends EventEmitter {
    socket: Socket;
    server?: Server;
    /** False (and nothing written) when the socket is not writable. Assigns sequence_number. */
    send(pdu: PDU, onResponse?: ResponseCallback, onSent?: ResponseCallback): boolean;
    bind_transceiver: Shortcut;
    submit_sm: Shortcut;
    deliver_sm: Shortcut;
    enquire_link: Shortcut;
    unbind: Shortcut;
    generic_nack: Shortcut;
    pause(): void;
    resume(): void;
    /** Ends the socket gracefully. */
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
    on(event: "connect" | "close", listener: () => void): this;
    on(event: "error", listener: (error: Error) => void): this;
    /** "pdu" for every PDU, or a command name such as "submit_sm", "deliver_sm", "unbind". */
    on(event: string, listener: (pdu: PDU) => void): this;
  }

  export class Server extends NetServer {
    sessions: Session[];
    on(event: "session", listener: (session: Session) => void): this;
    on(event: "error", listener: (error: Error) => void): this;
    on(event: "close" | "listening", listener: () => void): this;
  }

  export interface ConnectOptions {
    host: string;
    port: number;
    /** node-smpp's own enquire_link timer; Shiri runs its own so it can time the answer out. */
    auto_enquire_link_period?: number;
    tls?: boolean;
  }

  export interface ServerOptions {
    key?: string | Buffer;
    cert?: string | Buffer;
  }

  export function connect(options: ConnectOptions, onConnect?: () => void): Session;
  export function createServer(options?: ServerOptions, onSession?: (session: Session) => void): Server;

  /** command_status names → codes, e.g. errors.ESME_RTHROTTLED === 0x58. */
  export const errors: Readonly<Record<string, number>>;
  export const consts: {
    readonly REGISTERED_DELIVERY: Readonly<Record<string, number>>;
    readonly ESM_CLASS: Readonly<Record<string, number>>;
    readonly MESSAGE_STATE: Readonly<Record<string, number>>;
    readonly TON: Readonly<Record<string, number>>;
    readonly NPI: Readonly<Record<string, number>>;
    readonly ENCODING: Readonly<Record<string, number>>;
  };

  const smpp: {
    connect: typeof connect;
    createServer: typeof createServer;
    PDU: typeof PDU;
    Session: typeof Session;
    Server: typeof Server;
    errors: typeof errors;
    consts: typeof consts;
  };
  export default smpp;
}
