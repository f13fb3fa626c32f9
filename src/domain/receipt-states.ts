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

/** Every state SMPP 3.4 names (message_state, 5.2.28), final or not, as receipt texts write them. */
const NAMED_STATES: ReadonlySet<string> = new Set([...FINAL_STATES, "ENROUTE", "ACCEPTD"]);

/**
 * A receipt's state as a metric label: a state SMPP 3.4 names, else OTHER. A carrier writes what
 * it likes after `stat:`, and a label value per oddity would grow the series without bound.
 */
export function stateLabel(state: string): string {
  return NAMED_STATES.has(state) ? state : "OTHER";
}
