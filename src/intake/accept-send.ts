import { withTransaction } from "../db/pool.ts";
import type { DeliveryWindow } from "../domain/delivery-window.ts";
import type { MessageEventType } from "../events/events.ts";
import { InsufficientBalanceError } from "../ledger/ledger.ts";
import { OPTED_OUT, type PreparedSend, prepareSend, textOf, withOptOuts } from "../sending/prepare-send.ts";
import { recordSends, UnapprovedSenderError } from "../sending/record-send.ts";
import type { IntakeDeps } from "./deps.ts";
import { ApiError } from "./errors.ts";
import {
  claimIdempotencyKey,
  type IdempotentEndpoint,
  requestHash,
  storeClaimedResponse,
} from "./idempotency.ts";
import { segmentLimitError, sendAtError } from "./send-limits.ts";
import { type TextToSend, windowProblem } from "./send-options.ts";

function countAccepted(deps: IntakeDeps, send: PreparedSend): void {
  const { metrics } = deps;
  // Counted per operator and encoding: a batch's messages each have their own text.
  const counts = new Map<
    string,
    { operator: string; encoding: string; messages: number; segments: number }
  >();
  for (const m of send.messages) {
    const operator = m.operator ?? "none";
    const { encoding, segments } = textOf(send, m);
    const key = `${operator}:${encoding}`;
    const count = counts.get(key) ?? { operator, encoding, messages: 0, segments: 0 };
    count.messages++;
    count.segments += segments;
    counts.set(key, count);
  }
  for (const { operator, encoding, messages, segments } of counts.values()) {
    metrics.messagesAccepted.inc({ operator, encoding }, messages);
    metrics.segmentsBilled.inc({ operator }, segments);
  }
  metrics.amountHeld.inc({ currency: send.currency }, send.total);
  const optedOut = send.messages.filter((m) => m.operator_response === OPTED_OUT).length;
  if (optedOut > 0) metrics.messagesOptedOut.inc(optedOut);
}

export interface SendResponse {
  statusCode: number;
  body: unknown;
}

/**
 * Shared by the send endpoints (single, bulk, batch), once their body is valid: checks the segment limit, prices the
 * send, claims the Idempotency-Key (if any), records the send in one transaction and answers the
 * rendered response — or the stored one on a replay. The answer is rendered once the send is
 * written, as only then is it known which recipients are on the account's opt-out list.
 */
export async function accept(
  deps: IntakeDeps,
  input: {
    endpoint: IdempotentEndpoint;
    idempotencyKey: string | null;
    rawBody: unknown;
    locals: { accountId: string; currency: string; webhookEvents: readonly MessageEventType[] };
    send: {
      recipients: readonly string[];
      from: string;
      message: string;
      webhookUrl: string | null;
      /** The event types webhookUrl wants; null for all. */
      webhookEvents: readonly MessageEventType[] | null;
      bulk: boolean;
      /** A scheduled send's time; null to send at once. */
      sendAt: Date | null;
      /** `message` is the text as sent, its look-alike characters replaced. */
      smartEncoded?: boolean;
      /** A batch: each recipient's text as sent, already held to the segment limit by the caller. */
      texts?: readonly TextToSend[];
      validityPeriod?: number | null;
      deliverBetween?: DeliveryWindow | null;
    };
    render: (send: PreparedSend) => unknown;
    unapprovedSender: () => ApiError;
  },
): Promise<SendResponse> {
  const tooLong = input.send.texts ? null : segmentLimitError(input.send.message, deps.config.MAX_SEGMENTS);
  if (tooLong) throw new ApiError("validation", [tooLong]);
  const { sendAt } = input.send;
  // The requested send_at, and a delivery window that opens only after the validity ends.
  const checkSendAt = () => {
    const problem = (sendAt && sendAtError(sendAt)) || windowProblem(prepared);
    if (problem) throw new ApiError("validation", [problem]);
  };
  const prepared = prepareSend({
    accountId: input.locals.accountId,
    currency: input.locals.currency,
    from: input.send.from,
    body: input.send.message,
    recipients: input.send.recipients,
    webhookUrl: input.send.webhookUrl,
    webhookEvents: input.send.webhookEvents,
    bulk: input.send.bulk,
    sendAt,
    smartEncoded: input.send.smartEncoded ?? false,
    ...(input.send.texts ? { texts: input.send.texts } : {}),
    validityPeriod: input.send.validityPeriod ?? null,
    deliverBetween: input.send.deliverBetween ?? null,
    validityHours: deps.config.MESSAGE_VALIDITY_HOURS,
  });
  const toRecord = { send: prepared, accountWebhookEvents: input.locals.webhookEvents };
  const { idempotencyKey } = input;
  let written = prepared;
  try {
    // Without a key, the send joins the account's next group commit; with one, the key's row is
    // claimed in the send's own transaction, so a replay never writes twice.
    if (!idempotencyKey) checkSendAt();
    const response: SendResponse & { replay: boolean } = !idempotencyKey
      ? await deps.sends.commit(toRecord).then((optedOut) => {
          written = withOptOuts(prepared, optedOut);
          return { statusCode: 202, body: input.render(written), replay: false };
        })
      : await withTransaction(deps.pool, async (tx) => {
          let body = input.render(prepared);
          const claim = await claimIdempotencyKey(tx, {
            accountId: prepared.accountId,
            endpoint: input.endpoint,
            key: idempotencyKey,
            requestHash: requestHash(input.rawBody),
            statusCode: 202,
            response: body,
            ttlHours: deps.config.IDEMPOTENCY_TTL_HOURS,
          });
          if (claim.kind === "conflict") throw new ApiError("idempotencyConflict");
          if (claim.kind === "replay")
            return { statusCode: claim.statusCode, body: claim.response, replay: true };
          // After the replay check: a retry that comes once send_at has passed gets the original
          // answer. Thrown here, the key's claim is rolled back with the rest.
          checkSendAt();
          const key = { accountId: prepared.accountId, endpoint: input.endpoint, key: idempotencyKey };
          const { refused } = await recordSends(tx, deps.boss, prepared.accountId, [toRecord], {
            dispatchBatchSize: deps.config.DISPATCH_BATCH_SIZE,
            // Only a send that met an opted-out number stores its answer again (a statement more).
            beforeCommit: async (optedOut) => {
              written = withOptOuts(prepared, optedOut);
              if (written === prepared) return;
              body = input.render(written);
              await storeClaimedResponse(tx, key, body);
            },
          });
          if (refused.size > 0) throw new UnapprovedSenderError();
          return { statusCode: 202, body, replay: false };
        });
    if (!response.replay) countAccepted(deps, written);
    return { statusCode: response.statusCode, body: response.body };
  } catch (err) {
    if (err instanceof UnapprovedSenderError) throw input.unapprovedSender();
    if (err instanceof InsufficientBalanceError) throw new ApiError("insufficientBalance");
    throw err;
  }
}
