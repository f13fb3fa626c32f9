/**
 * States after which the carrier sends nothing more about the message (SMPP 3.4's final
 * message_state values, as receipt texts name them). Shared by the stages that read receipts and
 * those that settle messages, so it lives below both (docs/decisions/0010).
 */
export const FINAL_STATES: ReadonlySet<string> = new Set([
  "DELIVRD",
  "EXPIRED",
  "DELETED",
  "UNDELIV",
  "UNKNOWN",
  "REJECTD",
]);
