import { withTransaction } from "../db/pool.ts";
import type { PreparedSend } from "../sending/prepare-send.ts";
import { InsufficientBalanceError, recordSend, UnapprovedSenderError } from "../sending/record-send.ts";
import type { IntakeDeps } from "./deps.ts";
import { ApiError } from "./errors.ts";
import { claimIdempotencyKey, requestHash } from "./idempotency.ts";

function countAccepted(deps: IntakeDeps, send: PreparedSend): void {
  const { metrics } = deps;
  const perOperator = new Map<string, number>();
  for (const m of send.messages)
    perOperator.set(m.operator ?? "none", (perOperator.get(m.operator ?? "none") ?? 0) + 1);
  for (const [operator, count] of perOperator) {
    metrics.messagesAccepted.inc({ operator, encoding: send.encoding }, count);
    metrics.segmentsBilled.inc({ operator }, count * send.segments);
  }
  metrics.amountHeld.inc({ currency: send.currency }, send.total);
}

export interface SendResponse {
  statusCode: number;
  body: unknown;
}

/**
 * Shared by both send endpoints: claims the Idempotency-Key (if any), records the send in one
 * transaction and answers the rendered response — or the stored one on a replay.
 */
export async function accept(
  deps: IntakeDeps,
  input: {
    endpoint: string;
    idempotencyKey: string | null;
    rawBody: unknown;
    prepared: PreparedSend;
    render: (send: PreparedSend) => unknown;
    unapprovedSender: () => ApiError;
    accountHasWebhook: boolean;
  },
): Promise<SendResponse> {
  const { prepared } = input;
  const body = input.render(prepared);
  try {
    const response = await withTransaction(
      deps.pool,
      async (tx): Promise<SendResponse & { replay: boolean }> => {
        if (input.idempotencyKey) {
          const claim = await claimIdempotencyKey(tx, {
            accountId: prepared.accountId,
            endpoint: input.endpoint,
            key: input.idempotencyKey,
            requestHash: requestHash(input.rawBody),
            statusCode: 202,
            response: body,
            ttlHours: deps.config.IDEMPOTENCY_TTL_HOURS,
          });
          if (claim.kind === "conflict") throw new ApiError("idempotencyConflict");
          if (claim.kind === "replay")
            return { statusCode: claim.statusCode, body: claim.response, replay: true };
        }
        await recordSend(tx, deps.boss, prepared, {
          dispatchBatchSize: deps.config.DISPATCH_BATCH_SIZE,
          accountHasWebhook: input.accountHasWebhook,
        });
        return { statusCode: 202, body, replay: false };
      },
    );
    if (!response.replay) countAccepted(deps, prepared);
    return { statusCode: response.statusCode, body: response.body };
  } catch (err) {
    if (err instanceof UnapprovedSenderError) throw input.unapprovedSender();
    if (err instanceof InsufficientBalanceError) throw new ApiError("insufficientBalance");
    throw err;
  }
}
