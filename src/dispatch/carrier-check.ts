import { randomUUID } from "node:crypto";
import type { SmppSettings } from "../../carriers/index.ts";
import { type IdRelation, numberCandidates, numberKey, recordedSubmitId } from "../domain/smsc-id.ts";
import type { Logger } from "../logger.ts";
import { readReceipt } from "../receipts/read-receipt.ts";
import { describeStatus } from "../smpp/command-status.ts";
import { parseReceiptText } from "../smpp/receipt-text.ts";
import { DeliverLater, type DeliverSm, SmppSession } from "../smpp/session.ts";
import { buildSubmits } from "./build-submits.ts";

export interface CarrierCheckReport {
  link: string;
  host: string;
  port: number;
  system_id: string;
  bound: boolean;
  /**
   * Why the bind failed, in words: the connection's error ("connect ECONNREFUSED …"), no answer to
   * the connect or the bind, or the bind refused with its command status.
   */
  bind_error: string | null;
  /** What the SMSC answered the bind with. */
  negotiated: { system_id: string; interface_version: string | null } | null;
  /** With --to: the one message sent and what came back. */
  message?: {
    to: string;
    submit_status: string;
    /** The message_id of the submit_sm_resp, as written. */
    answer_id: string | null;
    receipt: {
      /** receipted_message_id and the text's `id:`, as written. */
      tlv_id: string | null;
      text_id: string | null;
      state: string | null;
    } | null;
    /** How the receipt's id names the answer's: exact, another writing of the number, or not at all. */
    matched: IdRelation | "no" | "no_receipt";
    /**
     * The deliver_sm the SMSC handed the check's bind that were not this message's receipt (a
     * handset's message, another message's receipt, or one whose id could not be read), refused
     * with ESME_RX_T_APPN for the SMSC to deliver again, to a worker's bind.
     */
    others_refused: number;
  };
}

/**
 * Rehearses a link: binds with its settings and reports what the SMSC negotiated; given a number,
 * submits one real message (not billed to any account) and reports the ids of the answer and the
 * receipt and whether Shiri would match them. One bind of the link's account is used for it: a
 * transmitter when only the bind is checked, so the SMSC hands it none of the account's deliver_sm;
 * a transceiver to hear the receipt, taking only its own (OwnReceipt).
 */
export async function checkCarrier(options: {
  link: string;
  settings: SmppSettings;
  logger: Logger;
  to?: string;
  from: string;
  bindTimeoutMs: number;
  receiptTimeoutMs: number;
  /** Ends the check early (the operator's Ctrl-C, its bind slot lost): it unbinds and reports. */
  signal?: AbortSignal;
}): Promise<CarrierCheckReport> {
  const { settings } = options;
  const own = new OwnReceipt(settings);
  const session = new SmppSession({
    settings,
    logger: options.logger,
    bindAs: options.to === undefined ? "transmitter" : "transceiver",
    onDeliverSm: (pdu) => own.hear(pdu),
    reconnect: { initialDelayMs: options.bindTimeoutMs, maxDelayMs: options.bindTimeoutMs },
  });
  // Closing ends the wait for the bind, and the wait for the receipt is woken to see it.
  const stop = () => {
    void session.close();
    own.stop();
  };
  options.signal?.addEventListener("abort", stop, { once: true });
  session.start();
  try {
    const bound = options.signal?.aborted ? false : await session.waitUntilBound(options.bindTimeoutMs);
    const negotiated = session.negotiated;
    const report: CarrierCheckReport = {
      link: options.link,
      host: settings.host,
      port: settings.port,
      system_id: settings.system_id,
      bound,
      bind_error: bound
        ? null
        : (session.lastBindFailure ?? `not bound within ${options.bindTimeoutMs} ms, with no answer yet`),
      negotiated: negotiated
        ? {
            system_id: negotiated.system_id,
            interface_version:
              negotiated.interface_version === null
                ? null
                : `0x${negotiated.interface_version.toString(16).padStart(2, "0")}`,
          }
        : null,
    };
    if (!bound || options.to === undefined) return report;
    report.message = await sendOne(session, options, own);
    return report;
  } finally {
    options.signal?.removeEventListener("abort", stop);
    await session.close();
  }
}

async function sendOne(
  session: SmppSession,
  options: Parameters<typeof checkCarrier>[0],
  own: OwnReceipt,
): Promise<NonNullable<CarrierCheckReport["message"]>> {
  const to = options.to as string;
  const [part] = buildSubmits(
    {
      id: randomUUID(),
      to,
      body: `Shiri carrier check ${new Date().toISOString().slice(0, 19)}Z`,
      sender_id: options.from,
      expiresAt: new Date(Date.now() + 3_600_000),
    },
    options.settings,
  );
  if (!part) throw new Error(`${to} is not a number Shiri can send to`);
  const submitting = session.submit(part.params);
  own.submitted(
    submitting.then((o) => (o.kind === "response" && o.command_status === 0 ? o.message_id : null)),
  );
  const outcome = await submitting;
  const unanswered = { receipt: null, matched: "no_receipt" } as const;
  if (outcome.kind !== "response")
    return {
      to,
      submit_status: `${outcome.kind}: ${outcome.reason}`,
      answer_id: null,
      ...unanswered,
      others_refused: own.refused,
    };
  const submitStatus = describeStatus(outcome.command_status);
  if (outcome.command_status !== 0)
    return { to, submit_status: submitStatus, answer_id: null, ...unanswered, others_refused: own.refused };
  const answerId = outcome.message_id;
  const heard = await own.final(options.receiptTimeoutMs);
  if (!heard)
    return {
      to,
      submit_status: submitStatus,
      answer_id: answerId,
      ...unanswered,
      others_refused: own.refused,
    };
  const text = parseReceiptText(heard.pdu.short_message);
  return {
    to,
    submit_status: submitStatus,
    answer_id: answerId,
    receipt: {
      tlv_id: heard.pdu.tlvs.receipted_message_id ?? null,
      text_id: text?.id ?? null,
      state: heard.state,
    },
    matched: heard.relation,
    others_refused: own.refused,
  };
}

/**
 * The check's own message's receipt, told from the rest of what the SMSC hands the check's bind.
 * On a live link's account that is also handsets' messages (a STOP among them) and the receipts of
 * messages the workers sent, which only a worker stores: acknowledging them here would lose them
 * (decision 0017: a deliver_sm is answered once what it says is stored). So each is refused with
 * ESME_RX_T_APPN, for the SMSC to deliver it again, to a worker's bind when it picks one. The check's own
 * receipt is the one whose id names its submit_sm_resp's the way the receipt stage would match it
 * (relationOf), never the first heard. A receipt whose id cannot be read is refused too: whose it
 * is cannot be told.
 */
class OwnReceipt {
  /** The submit_sm_resp's id once the submit is under way: null when it was not accepted. */
  private answer: Promise<string | null> | undefined;
  private heard: { pdu: DeliverSm; state: string; relation: IdRelation } | undefined;
  private wake: () => void = () => {};
  private stopped = false;
  /** deliver_sm refused as not the check's own receipt. */
  refused = 0;

  constructor(private readonly settings: SmppSettings) {}

  submitted(answer: Promise<string | null>): void {
    this.answer = answer;
  }

  async hear(pdu: DeliverSm): Promise<void> {
    // A receipt may overtake its answer: it waits for it (the submit's timeout at most).
    const answerId = this.answer ? await this.answer : null;
    const read = pdu.isReceipt ? readReceipt(pdu, this.settings) : null;
    const relation =
      answerId !== null && read?.kind === "receipt"
        ? relationOf(answerId, read.receipt.smscId, this.settings)
        : "no";
    if (read?.kind !== "receipt" || relation === "no") {
      this.refused++;
      throw new DeliverLater("not the carrier check's own receipt: left for a worker's bind");
    }
    // Its own intermediate notifications are taken (nothing is owed for them) but end nothing.
    if (pdu.isIntermediate || this.heard) return;
    this.heard = { pdu, state: read.receipt.state, relation };
    this.wake();
  }

  /** The check is ending: a wait for the receipt ends now. */
  stop(): void {
    this.stopped = true;
    this.wake();
  }

  /** Its final receipt, or undefined when none came within `ms` (or the check is ending). */
  async final(ms: number): Promise<OwnReceipt["heard"]> {
    if (!this.heard && !this.stopped)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    return this.heard;
  }
}

/**
 * How Shiri would match a receipt's id to the answer's: the same rules as the receipt stage, save
 * that a cross-base reading of an id of digits only is taken here with no evidence from the link
 * (decision 0036): finding which reading the link uses is what the check is for.
 */
function relationOf(answerId: string, receiptId: string, settings: SmppSettings): IdRelation | "no" {
  const recorded = recordedSubmitId(answerId, settings.id_format_submit).id;
  if (recorded === receiptId) return "exact";
  if (settings.id_format_submit === "string" || settings.id_format_receipt === "string") return "no";
  const key = numberKey(recorded);
  return numberCandidates(receiptId).find((c) => c.key === key)?.relation ?? "no";
}
