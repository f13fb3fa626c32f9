import type { Operator, SmscIdFormat } from "../../carriers/index.ts";
import { internationalForm } from "../domain/numbers.ts";
import { recordedSubmitId } from "../domain/smsc-id.ts";
import { type ClaimedMessage, OPTED_OUT_BEFORE_DISPATCH } from "../lifecycle/index.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { actionFor, describeStatus, isPassingRefusal, STATUS } from "../smpp/command-status.ts";
import type { LateAnswer, SubmitOptions, SubmitParams } from "../smpp/session.ts";
import { buildSubmits } from "./build-submits.ts";
import type { CarrierLink, LinkOutcome } from "./carrier-link.ts";
import { type DispatchOutcome, emptyOutcome } from "./settle.ts";

/** The operator response of a message failed after DISPATCH_MAX_UNANSWERED_SENDS unanswered tries. */
export const NO_ANSWER = "NO_ANSWER";

/** Throttled submits of a part retried within its batch before the message waits for a later run. */
const THROTTLED_TRIES_IN_BATCH = 8;

export interface SubmitContext {
  operator: Operator;
  link: CarrierLink;
  logger: Logger;
  metrics: Metrics;
  submitIdFormat: SmscIdFormat;
  validityHours: number;
  /** False once the dispatcher stops: no more throttled retries. */
  running: () => boolean;
  /** Called as each segment is accepted, before the batch settles (receipts may follow at once). */
  onAccepted: (part: DispatchOutcome["acceptedParts"][number]) => void;
  /** How long after a timeout a late answer can still come (the session's late-answer window). */
  lateAnswerSeconds: number;
  /** Tries of a message that may hear no answer; the next fails it NO_ANSWER, unsent. */
  maxUnansweredSends: number;
  /** Tries of a message the carrier may refuse with a status that may pass; the last fails it. */
  maxRefusals: number;
  /**
   * False once the batch's lease on the message is lost (another run may hold it now), or once the
   * dispatcher stops: its submits still waiting for the wire are withdrawn (not_sent "withdrawn"),
   * and the message is left to its holder, or given back. Asked right before each PDU is written.
   */
  maySend?: (messageId: string) => boolean;
}

/** A segment whose submit timed out: accepted after all if its late answer says so, else null. */
export type LateAcceptance = Promise<DispatchOutcome["acceptedParts"][number] | null>;

type Verdict =
  | { kind: "accepted"; smscId: string }
  | { kind: "failed"; response: string }
  /** `refusal`: the carrier refused it with a status that may pass (its name), not the link's state. */
  | { kind: "retry"; reason: string; refusal?: string };

/**
 * Submits every segment of the claimed messages that the carrier has not accepted yet, all at once
 * (the session's window and TPS limit pace them), and sorts each message into the outcome.
 */
export async function submitMessages(
  context: SubmitContext,
  messages: readonly ClaimedMessage[],
): Promise<{ outcome: DispatchOutcome; lateAcceptances: LateAcceptance[] }> {
  const outcome: DispatchOutcome = emptyOutcome();
  const lateAcceptances: LateAcceptance[] = [];
  await Promise.all(messages.map((m) => submitMessage(context, m, outcome, lateAcceptances)));
  return { outcome, lateAcceptances };
}

async function submitMessage(
  context: SubmitContext,
  message: ClaimedMessage,
  outcome: DispatchOutcome,
  lateAcceptances: LateAcceptance[],
): Promise<void> {
  // Its own expiry, else due time + the configured validity.
  const expiresAt = new Date(
    message.expires_at?.getTime() ?? message.due_at.getTime() + context.validityHours * 3_600_000,
  );
  const parts = buildSubmits({ ...message, expiresAt }, context.link.session.settings);
  const todo = parts.filter((p) => !message.accepted_parts.includes(p.partNo));
  if (todo.length > 0 && message.opted_out) {
    context.logger.info(
      { link: context.link.name, operator: context.operator, message_id: message.id },
      "the number opted out after this message was accepted: failed OPTED_OUT, not sent",
    );
    outcome.failed.push({
      id: message.id,
      response: OPTED_OUT_BEFORE_DISPATCH,
      error: "the number opted out before it was sent",
    });
    return;
  }
  if (todo.length > 0 && message.unanswered >= context.maxUnansweredSends) {
    // Each of those tries may have reached the handset: sending once more could be one copy too many.
    context.logger.warn(
      {
        link: context.link.name,
        operator: context.operator,
        message_id: message.id,
        tries: message.unanswered,
      },
      "the carrier never answered this message's submits: failed NO_ANSWER, not sent again",
    );
    outcome.failed.push({
      id: message.id,
      response: NO_ANSWER,
      error: `no answer from the carrier to ${message.unanswered} tries`,
    });
    return;
  }
  // With less than a second left nothing more of it goes (a throttling carrier can hold a submit
  // for many seconds, and SMPP's validity counts in whole seconds, at least one): its next claim
  // fails it expired, its hold released.
  const { maySend } = context;
  const options: SubmitOptions = {
    stillWanted: () => Date.now() <= expiresAt.getTime() - 1000 && (maySend?.(message.id) ?? true),
  };
  const verdicts = await Promise.all(
    todo.map(async (p) => {
      const result = await submitPart(context, p.params, {
        ...options,
        ref: `${message.id} part ${p.partNo}`,
      });
      if (result.kind === "unknown" && result.reason === "timeout")
        lateAcceptances.push(lateAcceptance(context, message.id, p.partNo, result.late));
      const verdict = judge(context, result);
      if (verdict.kind === "accepted")
        context.onAccepted({ messageId: message.id, partNo: p.partNo, smscId: verdict.smscId });
      return {
        partNo: p.partNo,
        verdict,
        awaitingLateAnswer: result.kind === "unknown" && result.reason === "timeout",
        maybeAtCarrier: result.kind === "unknown",
      };
    }),
  );

  let accepted = message.accepted_parts.length;
  let permanent: string | null = null;
  let retryReason: string | null = null;
  let refusal: string | null = null;
  const awaitingLateAnswer = verdicts.some((v) => v.awaitingLateAnswer);
  for (const { partNo, verdict } of verdicts) {
    if (verdict.kind === "accepted") {
      accepted++;
      outcome.acceptedParts.push({ messageId: message.id, partNo, smscId: verdict.smscId });
    } else if (verdict.kind === "failed") {
      permanent ??= verdict.response;
    } else {
      retryReason ??= verdict.reason;
      refusal ??= verdict.refusal ?? null;
    }
  }
  // A refusal that may pass, as often as DISPATCH_MAX_REFUSALS allows: the carrier's answer is
  // taken as final (an SMSC that always refuses a number would otherwise get it after every
  // back-off until its validity ends).
  const refusals = message.refusals + (refusal ? 1 : 0);
  if (!permanent && refusal && refusals >= context.maxRefusals) {
    context.logger.warn(
      { link: context.link.name, operator: context.operator, message_id: message.id, tries: refusals },
      "the carrier refused this message DISPATCH_MAX_REFUSALS times: failed with its status, not sent again",
    );
    outcome.failed.push({
      id: message.id,
      response: refusal,
      error: `carrier refused ${refusals} tries: ${refusal}`,
    });
  } else if (permanent)
    outcome.failed.push({ id: message.id, response: permanent, error: `carrier refused: ${permanent}` });
  else if (accepted === parts.length)
    outcome.succeeded.push({
      id: message.id,
      response: "ESME_ROK",
      firstRun: message.accepted_parts.length === 0,
    });
  else
    outcome.retry.push({
      id: message.id,
      error: retryReason ?? "not all segments accepted",
      unanswered: awaitingLateAnswer,
      number: internationalForm(message.to),
      maybeAtCarrier: verdicts.some((v) => v.maybeAtCarrier),
      refused: refusal !== null,
      // Not sent again while the carrier may still answer the timed-out submit.
      ...(awaitingLateAnswer ? { notBeforeSeconds: context.lateAnswerSeconds + 1 } : {}),
    });
}

/**
 * What a timed-out segment's late answer means: an acceptance (the carrier took it, so it is
 * recorded and never sent again) or nothing (no answer in the window, or a refusal: the message's
 * retry sends it again).
 */
function lateAcceptance(
  context: SubmitContext,
  messageId: string,
  partNo: number,
  late: Promise<LateAnswer | null>,
): LateAcceptance {
  return late.then((answer) => {
    if (!answer) return null;
    // Counted as one in time would be: the throttle metric is how an SRE sees a carrier's limit.
    if (actionFor(answer.command_status) === "backoff")
      context.metrics.throttled.inc({ operator: context.operator });
    const verdict = judge(context, { kind: "response", ...answer });
    const recorded = verdict.kind === "accepted";
    context.metrics.lateAnswers.inc({
      operator: context.operator,
      outcome: recorded ? "recorded" : "refused",
    });
    return recorded ? { messageId, partNo, smscId: verdict.smscId } : null;
  });
}

/**
 * Throttling answers are retried here at once: the session already pauses every submit while
 * the carrier throttles, so the part goes again as soon as the carrier is ready for it.
 */
async function submitPart(
  context: SubmitContext,
  params: SubmitParams,
  options: SubmitOptions,
): Promise<LinkOutcome> {
  let result = await submitCounted(context, params, options);
  for (let tries = 1; tries < THROTTLED_TRIES_IN_BATCH && context.running(); tries++) {
    if (result.kind !== "response" || actionFor(result.command_status) !== "backoff") break;
    result = await submitCounted(context, params, options);
  }
  return result;
}

async function submitCounted(
  context: SubmitContext,
  params: SubmitParams,
  options: SubmitOptions,
): Promise<LinkOutcome> {
  const { metrics, operator } = context;
  const result = await context.link.submit(params, options);
  if (result.kind === "response") {
    metrics.submits.inc({ operator, status: statusName(result.command_status) });
    if (actionFor(result.command_status) === "backoff") metrics.throttled.inc({ operator });
  } else {
    metrics.submits.inc({ operator, status: `${result.kind}:${result.reason}` });
  }
  return result;
}

function judge(context: SubmitContext, result: LinkOutcome): Verdict {
  if (result.kind === "not_sent") return { kind: "retry", reason: `not sent: ${result.reason}` };
  // On the wire with no answer: the carrier may have accepted it. SMPP cannot settle this
  // exactly once, so it is sent again (at least once; see docs/dispatch.md's in-flight window).
  if (result.kind === "unknown") return { kind: "retry", reason: `no response: ${result.reason}` };
  const action = actionFor(result.command_status);
  if (action === "ok") {
    // ESME_ROK is acceptance, whatever the id holds: the handset has the message, so it is never
    // sent again. An id no receipt can match (empty, over 65 characters, unreadable in an
    // explicit numeric format) is recorded as it came, and only counted.
    const recorded = recordedSubmitId(result.message_id, context.submitIdFormat);
    if (recorded.unusable) {
      context.metrics.smscIdsRefused.inc({ link: context.link.name, reason: recorded.unusable });
      context.logger.warn(
        {
          link: context.link.name,
          operator: context.operator,
          message_id: result.message_id.slice(0, 80),
          reason: recorded.unusable,
        },
        "accepted with a message id no receipt can match",
      );
    }
    return { kind: "accepted", smscId: recorded.id };
  }
  if (action === "fail") return { kind: "failed", response: statusName(result.command_status) };
  const reason = describeStatus(result.command_status);
  // Counted only while the carrier accepts other submits: an SMSC refusing everything is having a
  // bad spell, and the messages queued behind it must not fail for it.
  return isPassingRefusal(result.command_status) && context.link.acceptedWithin(REFUSAL_EVIDENCE_MS)
    ? { kind: "retry", reason, refusal: statusName(result.command_status) }
    : { kind: "retry", reason };
}

/** How recent an acceptance on the link makes a refusal the message's own. */
const REFUSAL_EVIDENCE_MS = 60_000;

const NAMES = new Map(Object.entries(STATUS).map(([name, code]) => [code, name]));
const statusName = (code: number): string => NAMES.get(code) ?? `0x${code.toString(16).padStart(8, "0")}`;
