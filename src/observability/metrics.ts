import { createServer, type Server } from "node:http";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { LINK_EVENTS, LINK_LOSS_REASONS } from "../smpp/link-events.ts";
import { healthzAnswer, type Readiness, readyzAnswer } from "./health.ts";

/**
 * Every metric Shiri exports, declared in one place. Labels are bounded: operators, routes,
 * SMPP status names, states — never message ids, numbers or account ids.
 */
export function createMetrics() {
  const registry = new Registry();
  // The event-loop lag histogram samples with a timer: every 10 ms (prom-client's default) cost an
  // idle process about 6 ms of CPU a second here; every 100 ms still sees any stall that matters
  // (docs/decisions/0011-idle-worker.md).
  collectDefaultMetrics({ register: registry, prefix: "shiri_", eventLoopMonitoringPrecision: 100 });
  const r = [registry];
  const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const slowBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600];

  return {
    registry,
    // Intake
    httpRequests: new Counter({
      name: "shiri_http_requests_total",
      help: "HTTP requests answered, by route and status code.",
      labelNames: ["method", "route", "status"] as const,
      registers: r,
    }),
    httpDuration: new Histogram({
      name: "shiri_http_request_duration_seconds",
      help: "Time to answer an HTTP request, by route.",
      labelNames: ["method", "route"] as const,
      buckets: latencyBuckets,
      registers: r,
    }),
    authRefusals: new Counter({
      name: "shiri_auth_refusals_total",
      help: "Requests refused authentication, by reason: missing (no header), checksum (a token that cannot be a key, refused without a lookup), unknown (looked up: unknown, revoked or expired), address_limited (its address failed too often this minute; no lookup).",
      labelNames: ["reason"] as const,
      registers: r,
    }),
    keyLookups: new Counter({
      name: "shiri_auth_key_lookups_total",
      help: "Bearer keys found, by what answered: kept (this process looked the key up within the last 250 ms) or database.",
      labelNames: ["answered_by"] as const,
      registers: r,
    }),
    rateLimited: new Counter({
      name: "shiri_rate_limited_total",
      help: "Requests refused with 429, by the limit that refused them (key, account, recipients, redeliveries).",
      labelNames: ["scope"] as const,
      registers: r,
    }),
    rateLimitBatch: new Histogram({
      name: "shiri_rate_limit_batch_requests",
      help: "Requests decided by one rate-limit statement (they share its round trip).",
      buckets: [1, 2, 5, 10, 20, 50, 100],
      registers: r,
    }),
    rateLimitSlices: new Counter({
      name: "shiri_rate_limit_slices_total",
      help: "Slices of a rate-limit bucket this process took ahead of its requests, by limit (key, account, recipients).",
      labelNames: ["scope"] as const,
      registers: r,
    }),
    rateLimitSliceUnits: new Counter({
      name: "shiri_rate_limit_slice_units_total",
      help: "Requests (recipients for the recipients limit) taken in slices, by limit.",
      labelNames: ["scope"] as const,
      registers: r,
    }),
    // Deprecated names of the two above ("lease" now means only a dispatch or bind-slot lease:
    // docs/decisions/0010), still emitted with the same values for operators' own dashboards.
    deprecatedRateLimitLeases: new Counter({
      name: "shiri_rate_limit_leases_total",
      help: "Deprecated: shiri_rate_limit_slices_total under its old name.",
      labelNames: ["scope"] as const,
      registers: r,
    }),
    deprecatedRateLimitLeasedUnits: new Counter({
      name: "shiri_rate_limit_leased_units_total",
      help: "Deprecated: shiri_rate_limit_slice_units_total under its old name.",
      labelNames: ["scope"] as const,
      registers: r,
    }),
    rateLimitReturnedUnits: new Counter({
      name: "shiri_rate_limit_returned_units_total",
      help: "Unused requests (recipients) of ended slices given back to their buckets, by limit.",
      labelNames: ["scope"] as const,
      registers: r,
    }),
    rateLimitLocal: new Counter({
      name: "shiri_rate_limit_local_decisions_total",
      help: "Requests allowed from this process's slices, with no rate-limit statement.",
      registers: r,
    }),
    messagesAccepted: new Counter({
      name: "shiri_messages_accepted_total",
      help: "Messages accepted at intake, by operator ('none' if unroutable) and encoding.",
      labelNames: ["operator", "encoding"] as const,
      registers: r,
    }),
    segmentsBilled: new Counter({
      name: "shiri_segments_billed_total",
      help: "Segments priced and held at intake, by operator.",
      labelNames: ["operator"] as const,
      registers: r,
    }),
    amountHeld: new Counter({
      name: "shiri_amount_held_total",
      help: "Amount held at intake, in ten-thousandths of the currency.",
      labelNames: ["currency"] as const,
      registers: r,
    }),
    holdsOutstanding: new Gauge({
      name: "shiri_holds_outstanding",
      help: "Amount held for messages not yet accepted or failed, in ten-thousandths.",
      labelNames: ["currency"] as const,
      registers: r,
    }),
    // Queue and dispatch
    queueDepth: new Gauge({
      name: "shiri_dispatch_queue_jobs",
      help: "Dispatch jobs due and waiting for a worker, by operator queue.",
      labelNames: ["operator"] as const,
      registers: r,
    }),
    queueOldestAge: new Gauge({
      name: "shiri_dispatch_queue_oldest_age_seconds",
      help: "How long the oldest due dispatch job has waited since it was due, by operator queue.",
      labelNames: ["operator"] as const,
      registers: r,
    }),
    queueNotYetDue: new Gauge({
      name: "shiri_dispatch_queue_not_yet_due_jobs",
      help: "Dispatch jobs waiting for their start time (scheduled sends, retries in back-off), by operator queue.",
      labelNames: ["operator"] as const,
      registers: r,
    }),
    oldestOpenMessageAge: new Gauge({
      name: "shiri_oldest_unfinished_message_age_seconds",
      help: "Seconds since the oldest accepted message not yet final (success or failed) was due, by operator (0: none). Scheduled messages count from their send_at.",
      labelNames: ["operator"] as const,
      registers: r,
    }),
    submits: new Counter({
      name: "shiri_smpp_submits_total",
      help: "submit_sm outcomes, by operator and SMPP command status (or not_sent / unknown).",
      labelNames: ["operator", "status"] as const,
      registers: r,
    }),
    lateAnswers: new Counter({
      name: "shiri_smpp_late_answers_total",
      help: "submit_sm_resp that came after the submit had timed out, by operator and what was done: recorded (accepted, not resent) or refused (sent again later).",
      labelNames: ["operator", "outcome"] as const,
      registers: r,
    }),
    throttled: new Counter({
      name: "shiri_smpp_throttled_total",
      help: "submit_sm answered with ESME_RTHROTTLED or ESME_RMSGQFUL, in time or late, by operator.",
      labelNames: ["operator"] as const,
      registers: r,
    }),
    leasesLost: new Counter({
      name: "shiri_dispatch_leases_lost_total",
      help: "Messages a dispatch batch stopped holding before it settled them, by operator and how it found out: taken (a lease renewal found another run holding them), lapsed (no renewal succeeded for a whole lease; their unsent submits were withdrawn), settle (the settle found another run holding them and left them to it).",
      labelNames: ["operator", "reason"] as const,
      registers: r,
    }),
    leaseRenewalsFailed: new Counter({
      name: "shiri_dispatch_lease_renewals_failed_total",
      help: "Renewals of a dispatch batch's lease that failed (the database unreachable or too slow), by operator.",
      labelNames: ["operator"] as const,
      registers: r,
    }),
    messagesFinal: new Counter({
      name: "shiri_messages_final_total",
      help: "Messages that reached success or failed at dispatch, by operator.",
      labelNames: ["operator", "status"] as const,
      registers: r,
    }),
    messagesExpired: new Counter({
      name: "shiri_messages_expired_total",
      help: "Messages the validity sweeper failed (never submitted within their validity; holds released), by operator.",
      labelNames: ["operator"] as const,
      registers: r,
    }),
    messagesCancelled: new Counter({
      name: "shiri_messages_cancelled_total",
      help: "Messages their sender cancelled before dispatch (holds released), by operator.",
      labelNames: ["operator"] as const,
      registers: r,
    }),
    dispatchLatency: new Histogram({
      name: "shiri_dispatch_latency_seconds",
      help: "From acceptance at intake (for a scheduled message, from its send_at) to the carrier accepting the message (enqueued → success).",
      labelNames: ["operator"] as const,
      buckets: slowBuckets,
      registers: r,
    }),
    deliveryLatency: new Histogram({
      name: "shiri_delivery_latency_seconds",
      help: "From the carrier accepting the message to its delivery receipt (success → delivered_at).",
      labelNames: ["operator"] as const,
      buckets: slowBuckets,
      registers: r,
    }),
    // Per link (one SMPP account; the default links are named after their operators).
    receipts: new Counter({
      name: "shiri_receipts_total",
      help: "Delivery receipts taken, by link and state (a state SMPP 3.4 names, else OTHER): a readable one once applied (a receipt refused and sent again by the SMSC counts once), an unreadable one when acknowledged.",
      labelNames: ["link", "state"] as const,
      registers: r,
    }),
    receiptsEarly: new Counter({
      name: "shiri_receipts_early_total",
      help: "Delivery receipts kept aside because their segment was not recorded yet (matched later, or dropped as unknown after the grace period), by link.",
      labelNames: ["link"] as const,
      registers: r,
    }),
    receiptsUnknown: new Counter({
      name: "shiri_receipts_unknown_total",
      help: "Receipts that matched no message within the grace period, by link.",
      labelNames: ["link"] as const,
      registers: r,
    }),
    receiptsUnmatched: new Counter({
      name: "shiri_receipts_unmatched_total",
      help: "Delivery receipts that set no segment, by link and reason (unreadable, unknown_id, duplicate, ambiguous: an id that could name two segments, never guessed).",
      labelNames: ["link", "reason"] as const,
      registers: r,
    }),
    receiptIdMatches: new Counter({
      name: "shiri_receipt_id_matches_total",
      help: "Receipts matched to their segment, by link and how the id named it: exact, same_number (another case or zero padding), hex_to_decimal (answered in hex, receipted in decimal), decimal_to_hex.",
      labelNames: ["link", "relation"] as const,
      registers: r,
    }),
    smscIdsRefused: new Counter({
      name: "shiri_smsc_ids_refused_total",
      help: "Accepted submits (ESME_ROK) whose message_id cannot serve for matching receipts (empty, too_long, unreadable in an explicit id format), by link; the segment is recorded accepted all the same and never sent again.",
      labelNames: ["link", "reason"] as const,
      registers: r,
    }),
    breakerState: new Gauge({
      name: "shiri_circuit_breaker_state",
      help: "Circuit breaker per link: 0 closed, 1 half-open, 2 open.",
      labelNames: ["link"] as const,
      registers: r,
    }),
    smppLinkEvents: new Counter({
      name: "shiri_smpp_link_events_total",
      help: "Bound SMPP sessions lost (event=disconnect) and bound again after a loss (event=rebind), by link and the loss's reason.",
      labelNames: ["link", "event", "reason"] as const,
      registers: r,
    }),
    smppRefusedPdus: new Counter({
      name: "shiri_smpp_refused_pdus_total",
      help: "Requests from the SMSC refused as unsupported (answered ESME_RINVCMDID, or left unanswered where SMPP defines no response), by link and command: data_sm (receipts sent this way never match), query_sm, …, unknown (a command_id SMPP does not define).",
      labelNames: ["link", "command"] as const,
      registers: r,
    }),
    sessionBound: new Gauge({
      name: "shiri_smpp_session_bound",
      help: "1 while this process holds a bound SMPP session on the link.",
      labelNames: ["link"] as const,
      registers: r,
    }),
    linkServing: new Gauge({
      name: "shiri_route_link_serving",
      help: "1 where this process sends the operator's messages over the link now (its route's first link that is not down).",
      labelNames: ["operator", "link"] as const,
      registers: r,
    }),
    tpsLimit: new Gauge({
      name: "shiri_smpp_tps_limit",
      help: "The link's configured submit_sm per second limit (0 = none).",
      labelNames: ["link"] as const,
      registers: r,
    }),
    // Inbound (src/inbound): what handsets send, and the opt-out lists
    inboundParts: new Counter({
      name: "shiri_inbound_parts_total",
      help: "Mobile-originated deliver_sm taken, by link and outcome (stored; repeat: the same PDU sent again by the SMSC within the repeat window, nothing else from its sender between, acknowledged and not stored twice).",
      labelNames: ["link", "outcome"] as const,
      registers: r,
    }),
    inboundMessages: new Counter({
      name: "shiri_inbound_messages_total",
      help: "Inbound messages made whole from their parts, by link, routing (routed to the account owning the address written to, or unrouted) and completeness (incomplete: parts still missing after INBOUND_REASSEMBLY_SECONDS).",
      labelNames: ["link", "routing", "completeness"] as const,
      registers: r,
    }),
    inboundDataCodings: new Counter({
      name: "shiri_inbound_unknown_data_codings_total",
      help: "Inbound messages in a data_coding other than GSM 03.38, IA5, Latin-1 and UCS-2, read as Latin-1, by link.",
      labelNames: ["link"] as const,
      registers: r,
    }),
    optOutChanges: new Counter({
      name: "shiri_opt_out_changes_total",
      help: "Numbers put on (opted_out) or taken off (opted_in) an account's opt-out list, by reason (keyword, api).",
      labelNames: ["change", "reason"] as const,
      registers: r,
    }),
    keywordReplies: new Counter({
      name: "shiri_keyword_replies_total",
      help: "Configured keyword replies, by outcome (sent: accepted as a send; opted_out: the number is on the list, written failed OPTED_OUT and not sent; not_sent: refused, e.g. balance or sender gone).",
      labelNames: ["outcome"] as const,
      registers: r,
    }),
    messagesOptedOut: new Counter({
      name: "shiri_messages_opted_out_total",
      help: "Messages of accepted sends created failed (OPTED_OUT, charge 0) because their number is on the account's opt-out list.",
      registers: r,
    }),
    // Audit (src/audit/audit-pass.ts)
    auditProblems: new Gauge({
      name: "shiri_audit_problems",
      help: "Problems the worker's periodic audit found in its last pass, by kind (balance_mismatches, holds_without_live_message, stuck_messages, parts_without_receipts); each counted up to 1000.",
      labelNames: ["kind"] as const,
      registers: r,
    }),
    auditLastPass: new Gauge({
      name: "shiri_audit_last_pass_timestamp_seconds",
      help: "When this process last completed an audit pass (Unix time).",
      registers: r,
    }),
    // Callbacks
    webhookDeliveries: new Counter({
      name: "shiri_webhook_deliveries_total",
      help: "Callback attempts, by outcome (delivered, retry, failed, refused; stopped: not sent, as its URL answered 410).",
      labelNames: ["outcome"] as const,
      registers: r,
    }),
    webhookRequeued: new Counter({
      name: "shiri_webhook_events_requeued_total",
      help: "Callback events put back in the outbox, by reason (stranded: their job was lost; redeliver: on request; host_held: their host hangs, and its queued jobs went back at its timeout).",
      labelNames: ["reason"] as const,
      registers: r,
    }),
    webhookPipeliningStopped: new Counter({
      name: "shiri_webhook_pipelining_stopped_total",
      help: "Times a callback receiver left pipelined requests unanswered (it hung up, or one timed out), after which its host was sent one request at a time for 10 minutes (WEBHOOK_PIPELINE_DEPTH).",
      registers: r,
    }),
    webhookHostsHeld: new Counter({
      name: "shiri_webhook_hosts_held_total",
      help: "Times a callback host left a request unanswered past WEBHOOK_TIMEOUT_MS, after which the worker ran one job at a time for it until it answered again.",
      registers: r,
    }),
    webhookBacklog: new Gauge({
      name: "shiri_webhook_events_pending",
      help: "Callback events not yet delivered or given up.",
      registers: r,
    }),
    webhookLatency: new Histogram({
      name: "shiri_webhook_latency_seconds",
      help: "From the status change to its callback being delivered.",
      buckets: slowBuckets,
      registers: r,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * Labelled counters have no series until their first increment, so a panel shows "No data"
 * instead of 0 and rate() misses that first event: every known label set starts at zero.
 */
export function initialiseSeries(
  metrics: Metrics,
  operators: readonly string[],
  links: readonly string[],
): void {
  for (const link of links) {
    metrics.receiptsUnknown.inc({ link }, 0);
    metrics.receiptsEarly.inc({ link }, 0);
    for (const reason of ["unreadable", "unknown_id", "duplicate", "ambiguous"])
      metrics.receiptsUnmatched.inc({ link, reason }, 0);
    for (const reason of ["empty", "too_long", "unreadable"]) metrics.smscIdsRefused.inc({ link, reason }, 0);
    metrics.breakerState.set({ link }, 0);
    metrics.sessionBound.set({ link }, 0);
    for (const event of LINK_EVENTS)
      for (const reason of LINK_LOSS_REASONS) metrics.smppLinkEvents.inc({ link, event, reason }, 0);
    // data_sm is the one a carrier is likely to send (its receipts); other commands show when they come.
    metrics.smppRefusedPdus.inc({ link, command: "data_sm" }, 0);
    for (const outcome of ["stored", "repeat"]) metrics.inboundParts.inc({ link, outcome }, 0);
    for (const routing of ["routed", "unrouted"])
      for (const completeness of ["complete", "incomplete"])
        metrics.inboundMessages.inc({ link, routing, completeness }, 0);
    metrics.inboundDataCodings.inc({ link }, 0);
  }
  for (const change of ["opted_out", "opted_in"])
    for (const reason of ["keyword", "api"]) metrics.optOutChanges.inc({ change, reason }, 0);
  for (const outcome of ["sent", "opted_out", "not_sent"]) metrics.keywordReplies.inc({ outcome }, 0);
  for (const answeredBy of ["kept", "database"]) metrics.keyLookups.inc({ answered_by: answeredBy }, 0);
  metrics.messagesOptedOut.inc(0);
  for (const operator of operators) {
    metrics.throttled.inc({ operator }, 0);
    for (const outcome of ["recorded", "refused"]) metrics.lateAnswers.inc({ operator, outcome }, 0);
    for (const status of ["success", "failed"]) metrics.messagesFinal.inc({ operator, status }, 0);
    metrics.messagesExpired.inc({ operator }, 0);
    for (const reason of ["taken", "lapsed", "settle"]) metrics.leasesLost.inc({ operator, reason }, 0);
    metrics.leaseRenewalsFailed.inc({ operator }, 0);
    metrics.messagesCancelled.inc({ operator }, 0);
  }
  for (const outcome of ["delivered", "retry", "failed", "refused", "stopped"])
    metrics.webhookDeliveries.inc({ outcome }, 0);
  for (const reason of ["stranded", "redeliver", "host_held"]) metrics.webhookRequeued.inc({ reason }, 0);
  metrics.rateLimited.inc({ scope: "redeliveries" }, 0);
  for (const scope of ["key", "account", "recipients"]) {
    metrics.rateLimited.inc({ scope }, 0);
    countRateLimitSlice(metrics, scope, 0, 0);
    metrics.rateLimitReturnedUnits.inc({ scope }, 0);
  }
}

/** One slice of a rate-limit bucket taken (`slices` of them, `units` in all), under both names. */
export function countRateLimitSlice(metrics: Metrics, scope: string, units: number, slices = 1): void {
  metrics.rateLimitSlices.inc({ scope }, slices);
  metrics.rateLimitSliceUnits.inc({ scope }, units);
  metrics.deprecatedRateLimitLeases.inc({ scope }, slices);
  metrics.deprecatedRateLimitLeasedUnits.inc({ scope }, units);
}

/**
 * The metrics endpoint on its own port, so it is never exposed with the public API; /healthz
 * and /readyz there too (for the whole process: a worker's operators included), when given.
 */
export function serveMetrics(
  metrics: Metrics,
  host: string,
  port: number,
  readiness?: Readiness,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = req.url?.split("?", 1)[0];
    // HEAD as GET (Node leaves the body out): load balancers and probes use either.
    const reading = req.method === "GET" || req.method === "HEAD";
    if (readiness && reading && (path === "/healthz" || path === "/readyz")) {
      const answer = path === "/healthz" ? Promise.resolve(healthzAnswer()) : readyzAnswer(readiness.process);
      answer.then(
        (a) =>
          res
            .writeHead(a.statusCode, { ...a.headers, "content-type": "application/json" })
            .end(JSON.stringify(a.body)),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
      return;
    }
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    metrics.registry.metrics().then(
      (body) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(body),
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}
