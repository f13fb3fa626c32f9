/**
 * What an SmppSession (session.ts) is given and what it answers: its options, a submit's
 * parameters and outcome.
 */
import type { SmppSettings } from "../../carriers/types.ts";
import type { DeliverSm } from "./deliver-sm.ts";
import type { LinkEvent, LinkLossReason } from "./link-events.ts";
import type { UnansweredSubmits } from "./unanswered-submits.ts";

export type SessionState = "disconnected" | "connecting" | "bound" | "closing";

/** pino-compatible. */
export interface SmppLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface SubmitPacer {
  /** Resolves when one submit_sm may be written; the returned function is called once it is answered. */
  acquire(): Promise<() => void>;
}

export interface SubmitParams {
  source_addr: string;
  destination_addr: string;
  data_coding: number;
  /** Encoded user data, without the UDH. */
  short_message: Buffer;
  /** User data header, with its length octet: prepended to the user data, UDHI set in esm_class. */
  udh?: Buffer;
  /** Default 1: a receipt on any final state. */
  registered_delivery?: number;
  /**
   * When the message expires: the carrier is given what is left of it when the PDU is written (in
   * SMPP relative form, at least a second), however long the submit waited for a slot or a pause.
   */
  validUntil?: Date;
  /** Override the settings' TON/NPI, e.g. for a numeric sender. */
  source_addr_ton?: number;
  source_addr_npi?: number;
  /** Concatenation by the sar_* TLVs (SMPP 3.4 5.3.2.22–24) instead of a UDH. */
  sar?: { ref: number; total: number; seq: number };
}

export type SubmitOutcome =
  | { kind: "response"; command_status: number; message_id: string }
  /** Never reached the wire: safe to retry. */
  | {
      kind: "not_sent";
      reason: "not_bound" | "closing" | "socket_unwritable" | "invalid_pdu" | "rate_limiter" | "withdrawn";
    }
  /** Was on the wire and the carrier may have accepted it: settle by receipt, never resend blindly. */
  | { kind: "unknown"; reason: "connection_lost" }
  /**
   * No answer within response_timeout_ms. The carrier may still answer: `late` resolves with that
   * answer if it comes within the late-answer window on the same connection, else with null.
   */
  | { kind: "unknown"; reason: "timeout"; late: Promise<LateAnswer | null> };

/** How one submit may be called off while it waits for a window slot or a TPS token, and its label. */
export interface SubmitOptions {
  /**
   * Asked right before the PDU is written: false withdraws it (outcome not_sent "withdrawn"). The
   * dispatcher withdraws the submits of messages whose lease it no longer holds.
   */
  stillWanted?: () => boolean;
  /**
   * The caller's own label for this submit (dispatch: its message id and part), opaque to the
   * session: only echoed as `ref` in the log lines about this submit, which otherwise could name
   * it only by its destination prefix and sequence_number.
   */
  ref?: string;
}

/** A submit_sm_resp that came after its submit had timed out. */
export interface LateAnswer {
  command_status: number;
  message_id: string;
}

export interface SmppSessionOptions {
  settings: SmppSettings;
  logger: SmppLogger;
  /** Shared TPS budget; awaited once per submit_sm, after it has a window slot, just before the write. */
  pacer?: SubmitPacer;
  /**
   * deliver_sm_resp is sent only after this settles; a throw answers ESME_RX_T_APPN so the SMSC
   * retries (logged as a failure, unless it is a DeliverLater).
   */
  onDeliverSm?: (pdu: DeliverSm) => Promise<void> | void;
  /**
   * How it binds: as a transceiver (default), or as a transmitter, to which SMPP 3.4 has an SMSC
   * send no deliver_sm: for a session that only submits and stores nothing it would hear.
   */
  bindAs?: "transceiver" | "transmitter";
  onStateChange?: (state: SessionState) => void;
  /** A bound session lost (not by close()), and each bind that follows such a loss. */
  onLinkEvent?: (event: LinkEvent, reason: LinkLossReason) => void;
  /**
   * A request from the SMSC refused as unsupported (data_sm, query_sm, …; "unknown" for a
   * command_id SMPP does not define), by command name; the session also logs it, paced.
   */
  onRefusedPdu?: (command: string) => void;
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /**
   * Pause of new submits after ESME_RTHROTTLED / ESME_RMSGQFUL, doubling while they persist (the
   * window is cut to one as well, and grows back by one per accepted answer: congestion-window.ts).
   */
  throttle?: { initialDelayMs?: number; maxDelayMs?: number };
  /** How long close() waits for submits in flight; default response_timeout_ms. */
  closeTimeoutMs?: number;
  /** How long after a submit's timeout its answer still counts (recorded, not resent); default 3 × response_timeout_ms. */
  lateAnswerWindowMs?: number;
  /** Where the session counts its submits written and not yet answered (receipts wait on it). */
  unanswered?: UnansweredSubmits;
}
