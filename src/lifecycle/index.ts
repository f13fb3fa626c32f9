/**
 * The message lifecycle: every status change Shiri makes after a send is accepted, with the SQL
 * guard that allows it, the money it moves and the event it records. Dispatch, receipts, the
 * sweepers, the cancel endpoints and the opt-out list call these functions; nothing else changes a message's status. (A send is written as
 * `enqueued`, or `failed` UNROUTABLE and billed at once, by src/sending/record-send.ts.)
 * test/integration/lifecycle.test.ts holds every row of this table to its word.
 */
export const TRANSITIONS = [
  {
    name: "claim",
    from: "enqueued, or processing whose lease ran out; never before its send_at",
    to: "processing (leased to one run)",
    money: "none",
    event: "none",
    where: "claim.ts",
  },
  {
    name: "expire",
    from: "enqueued, or processing whose lease ran out, past its expires_at, else send_at (else received_at) + validity; not one the carrier took every segment of",
    to: "failed EXPIRED (its send gave a validity_period), else VALIDITY_EXPIRED",
    money: "release; capture when the carrier took a segment of it",
    event: "message.failed",
    where: "expire.ts",
  },
  {
    name: "cancel",
    from: "enqueued (not yet claimed), on the sender's request",
    to: "failed CANCELLED",
    money: "release",
    event: "message.failed",
    where: "cancel.ts",
  },
  {
    name: "opt out",
    from: "enqueued, or processing between tries, when its number goes on the account's opt-out list",
    to: "failed OPTED_OUT",
    money: "release; capture when the carrier took a segment of it",
    event: "message.failed",
    where: "cancel.ts",
  },
  {
    name: "accept",
    from: "processing, leased to this run (its accepted segments are recorded whoever holds the lease)",
    to: "success (with delivered_at when its DELIVRD receipts came with the batch)",
    money: "capture",
    event: "message.success (and message.delivered)",
    where: "outcomes.ts",
  },
  {
    name: "refuse",
    from: "processing, leased to this run",
    to: "failed with the carrier's status",
    money: "release; capture when the carrier took a segment of it",
    event: "message.failed",
    where: "outcomes.ts",
  },
  {
    name: "give up the lease",
    from: "processing, leased to this run",
    to: "processing, free for a later try (after the late-answer window when a submit timed out)",
    money: "none",
    event: "none",
    where: "outcomes.ts",
  },
  {
    name: "deliver",
    from: "success, not yet delivered",
    to: "success with delivered_at (every segment DELIVRD) or a final state in operator_response",
    money: "none",
    event: "message.delivered or message.undelivered",
    where: "deliver.ts",
  },
] as const;

export {
  CANCELLED,
  type CancelledMessage,
  cancelMessages,
  failOptedOutMessages,
  OPTED_OUT_BEFORE_DISPATCH,
  optedOutAmong,
} from "./cancel.ts";
export { type ClaimedMessage, claimMessages, extendLease, releaseLease } from "./claim.ts";
export { type Delivery, refreshDelivery, stillBeingAccepted } from "./deliver.ts";
export { expireMessages, sweepExpired, VALIDITY_EXPIRED } from "./expire.ts";
export { giveUpLease, markAccepted, markRefused } from "./outcomes.ts";
