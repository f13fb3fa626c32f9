/**
 * Queries that may rightly return nothing on a healthy Shiri, and why. grafana/README.md carries
 * the same list (the check compares them). "provoked" entries are faults the check itself causes
 * through the simulators, so for those data is required; the others may stay empty.
 */
import { readFileSync } from "node:fs";

export type EmptyKind =
  /** Empty until a fault happens that the check does not cause. */
  | "fault"
  /** Empty until an operator sets something the embedded defaults leave unset. */
  | "setting"
  /** Empty on a healthy system; the check causes it, so it must have data here. */
  | "provoked";

export interface EmptyUntil {
  key: string;
  kind: EmptyKind;
  until: string;
}

/** Simulator faults the check switches on (carriers/simulator/main.ts reads them), so fault panels show data. */
export const PROVOKED_FAULTS: Readonly<Record<string, string>> = {
  SIM_ECONET_REJECT_RATE: "0.03", // ESME_RINVDSTADR for 3% of econet submits: failed messages
  SIM_NETONE_OUTCOMES: "DELIVRD=90,UNDELIV=10", // 10% of netone receipts are UNDELIV
  SIM_TELECEL_TPS_LIMIT: "20", // telecel's SMSC throttles beyond 20 submit_sm/s (ours has no limit)
  // netone's SMSC drops each connection after 25 submits: disconnects, rebinds, and enough of them
  // (10 or so in the traffic's ~290 netone messages) to fire ShiriSmppLinkFlapping (over 5), the alert
  // followed end to end. A count, not a rate: a rate high enough to be sure of six drops hit some
  // messages again and again, and their growing back-off outlasted the check's wait for the queues.
  SIM_NETONE_DROP_AFTER_SUBMITS: "25",
};

/**
 * Counters that read 0 until a fault; the check provokes each and demands it rose. Link metrics
 * are labelled by link: the default links are named after the operators, so netone's SMSC is
 * link "netone".
 */
export const PROVOKED_COUNTERS: readonly (readonly [string, string])[] = [
  [
    "SMPP disconnects counted (SIM_NETONE_DROP_AFTER_SUBMITS)",
    'sum(shiri_smpp_link_events_total{link="netone",event="disconnect",reason="peer_closed"}) > 0',
  ],
  [
    "SMPP rebinds counted after them",
    'sum(shiri_smpp_link_events_total{link="netone",event="rebind",reason="peer_closed"}) > 0',
  ],
];

export const EMPTY_UNTIL: readonly EmptyUntil[] = [
  { key: "shiri-overview / API 5xx rate", kind: "fault", until: "the API answers a 5xx" },
  {
    key: "shiri-overview / Failures / A",
    kind: "provoked",
    until: "a carrier refuses a message for good (SIM_ECONET_REJECT_RATE)",
  },
  {
    key: "shiri-overview / Failures / B",
    kind: "provoked",
    until: "a client sends a number no operator serves (the check sends some)",
  },
  {
    key: "shiri-overview / Failures / C",
    kind: "provoked",
    until: "a receipt says other than DELIVRD (SIM_NETONE_OUTCOMES)",
  },
  {
    key: "shiri-carriers / Submit throughput vs TPS limit / C",
    kind: "setting",
    until: "a link has a TPS limit (SMPP_<LINK>_TPS_LIMIT > 0; the default 0 means none)",
  },
  {
    key: "shiri-carriers / Submit errors (excluding throttling)",
    kind: "provoked",
    until: "a submit is refused, times out or is lost, or the breaker refuses it (SIM_ECONET_REJECT_RATE)",
  },
  {
    key: "shiri-carriers / Throttling",
    kind: "provoked",
    until: "a carrier throttles (SIM_TELECEL_TPS_LIMIT)",
  },
];

/** Differences between EMPTY_UNTIL and the table in grafana/README.md (none when they agree). */
export function compareWithReadme(readmePath: string): string[] {
  const text = readFileSync(readmePath, "utf8");
  const section = text.split(/^## /m).find((s) => s.startsWith("Empty until a fault happens"));
  if (!section) return [`${readmePath}: no "## Empty until a fault happens" section`];
  const rows = new Map<string, string>();
  for (const line of section.split("\n")) {
    const m = line.match(/^\|\s*`([^`]+)`\s*\|[^|]*\|\s*(\w+)/);
    if (m?.[1] && m[2]) rows.set(m[1], m[2].toLowerCase());
  }
  const problems: string[] = [];
  for (const e of EMPTY_UNTIL) {
    const shown = rows.get(e.key);
    const want = e.kind === "provoked" ? "provoked" : "allowed";
    if (!shown) problems.push(`grafana/README.md does not list "${e.key}"`);
    else if (shown !== want)
      problems.push(`grafana/README.md says "${shown}" for "${e.key}", the check "${want}"`);
    rows.delete(e.key);
  }
  for (const key of rows.keys()) problems.push(`grafana/README.md lists "${key}", the check does not`);
  return problems;
}
