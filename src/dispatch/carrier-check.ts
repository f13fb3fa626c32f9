import { randomUUID } from "node:crypto";
import type { SmppSettings } from "../../carriers/index.ts";
import { type IdRelation, numberCandidates, numberKey, recordedSubmitId } from "../domain/smsc-id.ts";
import type { Logger } from "../logger.ts";
import { readReceipt } from "../receipts/read-receipt.ts";
import { describeStatus } from "../smpp/command-status.ts";
import { parseReceiptText } from "../smpp/receipt-text.ts";
import { type DeliverSm, SmppSession } from "../smpp/session.ts";
import { buildSubmits } from "./build-submits.ts";

export interface CarrierCheckReport {
  link: string;
  host: string;
  port: number;
  system_id: string;
  bound: boolean;
  /** Why the bind failed (a command status, "timeout", or no connection at all). */
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
  };
}

/**
 * Rehearses a link: binds with its settings and reports what the SMSC negotiated; given a number,
 * submits one real message (not billed to any account) and reports the ids of the answer and the
 * receipt and whether Shiri would match them. One bind of the link's account is used for it.
 */
export async function checkCarrier(options: {
  link: string;
  settings: SmppSettings;
  logger: Logger;
  to?: string;
  from: string;
  bindTimeoutMs: number;
  receiptTimeoutMs: number;
}): Promise<CarrierCheckReport> {
  const { settings } = options;
  const receipts: DeliverSm[] = [];
  let heard: () => void = () => {};
  const session = new SmppSession({
    settings,
    logger: options.logger,
    onDeliverSm: (pdu) => {
      receipts.push(pdu);
      heard();
    },
    reconnect: { initialDelayMs: options.bindTimeoutMs, maxDelayMs: options.bindTimeoutMs },
  });
  session.start();
  try {
    const bound = await session.waitUntilBound(options.bindTimeoutMs);
    const negotiated = session.negotiated;
    const report: CarrierCheckReport = {
      link: options.link,
      host: settings.host,
      port: settings.port,
      system_id: settings.system_id,
      bound,
      bind_error: bound ? null : (session.lastBindRefusal ?? "no connection"),
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
    report.message = await sendOne(session, options, receipts, (wake) => {
      heard = wake;
    });
    return report;
  } finally {
    await session.close();
  }
}

async function sendOne(
  session: SmppSession,
  options: Parameters<typeof checkCarrier>[0],
  receipts: DeliverSm[],
  onHeard: (wake: () => void) => void,
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
  const outcome = await session.submit(part.params);
  if (outcome.kind !== "response")
    return {
      to,
      submit_status: `${outcome.kind}: ${outcome.reason}`,
      answer_id: null,
      receipt: null,
      matched: "no_receipt",
    };
  const submitStatus = describeStatus(outcome.command_status);
  if (outcome.command_status !== 0)
    return { to, submit_status: submitStatus, answer_id: null, receipt: null, matched: "no_receipt" };
  const deadline = Date.now() + options.receiptTimeoutMs;
  let receipt = receipts.find((r) => r.isReceipt && !r.isIntermediate);
  while (!receipt && Date.now() < deadline) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      onHeard(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    receipt = receipts.find((r) => r.isReceipt && !r.isIntermediate);
  }
  const answerId = outcome.message_id;
  if (!receipt)
    return { to, submit_status: submitStatus, answer_id: answerId, receipt: null, matched: "no_receipt" };
  const read = readReceipt(receipt, options.settings);
  const text = parseReceiptText(receipt.short_message);
  return {
    to,
    submit_status: submitStatus,
    answer_id: answerId,
    receipt: {
      tlv_id: receipt.tlvs.receipted_message_id ?? null,
      text_id: text?.id ?? null,
      state: read.kind === "receipt" ? read.receipt.state : null,
    },
    matched: read.kind === "receipt" ? relationOf(answerId, read.receipt.smscId, options.settings) : "no",
  };
}

/** How Shiri would match a receipt's id to the answer's: the same rules as the receipt stage. */
function relationOf(answerId: string, receiptId: string, settings: SmppSettings): IdRelation | "no" {
  const recorded = recordedSubmitId(answerId, settings.id_format_submit).id;
  if (recorded === receiptId) return "exact";
  if (settings.id_format_submit === "string" || settings.id_format_receipt === "string") return "no";
  const key = numberKey(recorded);
  return numberCandidates(receiptId).find((c) => c.key === key)?.relation ?? "no";
}
