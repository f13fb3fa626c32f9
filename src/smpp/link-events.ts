/**
 * What happens to an SMPP link that the service counts (shiri_smpp_link_events_total): a bound
 * session lost other than by our own close(), and each bind that recovers from such a loss. Kept
 * apart from session.ts so the metrics module names them without loading the SMPP library.
 */
export const LINK_EVENTS = ["disconnect", "rebind"] as const;
export type LinkEvent = (typeof LINK_EVENTS)[number];

/** Why a bound session was lost; a rebind carries the reason of the loss it recovers from. */
export const LINK_LOSS_REASONS = [
  "peer_closed",
  "socket_error",
  "enquire_link_timeout",
  "peer_unbind",
] as const;
export type LinkLossReason = (typeof LINK_LOSS_REASONS)[number];
