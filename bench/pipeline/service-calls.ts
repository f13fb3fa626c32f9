import { z } from "zod";
import type { ShiriProcess } from "../lib/shiri-process.ts";
import { type AcceptedMessage, digits, recipient, wallMs } from "../peers/load-protocol.ts";
import { probeForm, type TlvMode } from "../peers/sink-ids.ts";
import type { WebhookReceiver } from "./webhook-receiver.ts";

/** The bench's own calls to the API, as a customer makes them (not the measured load). */
const headers = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });

const webhookAnswer = z.object({
  data: z.object({
    signing_secret: z.string().optional(),
    events: z.array(z.string()).optional(),
    batch_size: z.number().optional(),
  }),
});

/**
 * Registers the account webhook for delivery events only, taking up to `batchSize` events a
 * request. A service that does not know `batch_size` yet refuses it (400): then the webhook
 * takes one event a request; one that does not know `events` either gets every event. The answer
 * says what was registered.
 */
export async function registerWebhook(
  base: string,
  key: string,
  url: string,
  batchSize: number,
): Promise<{ secret: string | null; events: string; batchSize: number }> {
  const put = (body: object) =>
    fetch(`${base}/api/v1/webhook`, {
      method: "PUT",
      headers: headers(key),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  let res = await put({ url, events: ["message.delivered"], batch_size: batchSize });
  if (res.status === 400) {
    await res.arrayBuffer();
    res = await put({ url, events: ["message.delivered"] });
  }
  let fallback = false;
  if (res.status === 400) {
    await res.arrayBuffer();
    res = await put({ url });
    fallback = true;
  }
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(`PUT /api/v1/webhook answered ${res.status}: ${text.slice(0, 300)}`);
  const { data } = webhookAnswer.parse(JSON.parse(text));
  const events = fallback
    ? "all (the service refused the events field)"
    : (data.events?.join(", ") ?? "message.delivered (not echoed)");
  return { secret: data.signing_secret ?? null, events, batchSize: data.batch_size ?? 1 };
}

const sent = z.object({ id: z.string(), to: z.string() });

async function sendOne(
  base: string,
  key: string,
  to: string,
  from: string,
  message: string,
): Promise<string> {
  const res = await fetch(`${base}/api/v1/sms`, {
    method: "POST",
    headers: headers(key),
    body: JSON.stringify({ to, from, message }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`POST /api/v1/sms answered ${res.status}: ${text.slice(0, 300)}`);
  return sent.parse(JSON.parse(text)).id;
}

const PROBE_TIMEOUT_MS = 30_000;

/**
 * Which receipted_message_id form the worker matches (see peers/sink-ids.ts): one message to a
 * number the sink answers in each form; the first delivery callback decides. Also warms the path.
 */
export async function probeTlvMode(
  base: string,
  key: string,
  receiver: WebhookReceiver,
  worker: ShiriProcess,
): Promise<{ mode: TlvMode; ids: string[] }> {
  const forms = new Map<string, TlvMode>();
  for (const subscriber of [0, 1]) {
    const to = recipient(subscriber);
    forms.set(await sendOne(base, key, to, "BENCH", "Shiri bench: probe."), probeForm(digits(to)));
  }
  const deadline = Date.now() + PROBE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    for (const [id, mode] of forms) if (receiver.delivered.has(id)) return { mode, ids: [...forms.keys()] };
    if (worker.exited()) throw new Error(`the worker exited:\n${worker.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `neither probe message got its delivery callback in ${PROBE_TIMEOUT_MS / 1000} s ` +
      `(callbacks by type: ${JSON.stringify(Object.fromEntries(receiver.byType))}); worker output:\n${worker.output()}`,
  );
}

const bulkAnswer = z.object({ data: z.object({ items: z.array(sent) }) });

/** One bulk send; ok false (and nothing accepted) on any answer but 202. */
export async function sendBulk(
  base: string,
  key: string,
  to: readonly string[],
  from: string,
  message: string,
): Promise<{ ok: boolean; ms: number; accepted: AcceptedMessage[]; error?: string }> {
  const started = performance.now();
  try {
    const res = await fetch(`${base}/api/v1/sms/bulk`, {
      method: "POST",
      headers: headers(key),
      body: JSON.stringify({ to, from, message }),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    const at = wallMs();
    if (res.status !== 202)
      return { ok: false, ms, accepted: [], error: `${res.status}: ${text.slice(0, 300)}` };
    const items = bulkAnswer.parse(JSON.parse(text)).data.items;
    return { ok: true, ms, accepted: items.map((m) => [m.id, m.to, at]) };
  } catch (err) {
    return { ok: false, ms: performance.now() - started, accepted: [], error: String(err) };
  }
}
