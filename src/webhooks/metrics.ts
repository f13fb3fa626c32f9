import { Counter, Histogram } from "prom-client";

/** Webhook metrics, on prom-client's default registry (move beside the others when one place exists). */
export const webhookAttempts = new Counter({
  name: "shiri_webhook_attempts_total",
  help: "Callback attempts by outcome: delivered, retry (will be tried again) or failed (final).",
  labelNames: ["outcome"] as const,
});

export const webhookEventsFailed = new Counter({
  name: "shiri_webhook_events_failed_total",
  help: "Events given up on: refused, answered with a final 4xx, or out of retries.",
});

export const webhookDeliveryLag = new Histogram({
  name: "shiri_webhook_delivery_lag_seconds",
  help: "From the event being recorded (the status change) to its successful callback.",
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86_400],
});
