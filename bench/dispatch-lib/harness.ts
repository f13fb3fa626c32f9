/**
 * What the dispatch bench and the release bench's end-to-end scenario share: carrier simulators
 * on ephemeral loopback ports, the environment that points a worker at them, an account with a
 * balance no run can exhaust, and bulk sends through the API.
 */
import { OPERATORS, type Operator } from "../../carriers/index.ts";
import {
  type RunningSimulators,
  type SimulatorBehaviour,
  startSimulators,
} from "../../carriers/simulator/index.ts";
import { createAccount } from "../../src/accounts/accounts.ts";
import { addSenderId } from "../../src/accounts/sender-ids.ts";
import { type Pool, withTransaction } from "../../src/db/pool.ts";
import { SENDER } from "../peers/load-protocol.ts";

export { SENDER };

/** 100 million USD in ten-thousandths. */
const BALANCE = 1_000_000_000_000;

/** One number prefix per operator (econet also has 78; one is enough here). */
export const PREFIX: Readonly<Record<Operator, string>> = { econet: "77", netone: "71", telecel: "73" };

export async function startBenchSimulators(
  behaviour: Partial<Record<Operator, Partial<SimulatorBehaviour>>>,
): Promise<RunningSimulators> {
  return startSimulators({
    host: "127.0.0.1",
    perOperator: Object.fromEntries(OPERATORS.map((op) => [op, { port: 0, behaviour: behaviour[op] ?? {} }])),
  });
}

/** SMPP settings that point a worker's sessions at the simulators. */
export function smppEnv(ports: Partial<Record<Operator, number>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const op of OPERATORS) {
    const port = ports[op];
    if (port === undefined) continue;
    env[`SMPP_${op.toUpperCase()}_HOST`] = "127.0.0.1";
    env[`SMPP_${op.toUpperCase()}_PORT`] = String(port);
  }
  return env;
}

/** Waits until every given simulator has a bound session (the worker holds its bind slots). */
export async function waitForBinds(
  sims: RunningSimulators,
  operators: readonly Operator[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!operators.every((op) => sims.get(op).boundSessions > 0)) {
    if (Date.now() > deadline)
      throw new Error(`worker did not bind to ${operators.join(", ")} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function setUpAccount(pool: Pool): Promise<{ accountId: string; key: string }> {
  const { account, key } = await withTransaction(pool, (tx) =>
    createAccount(tx, { name: `bench-${Date.now()}`, currency: "USD", openingBalance: BALANCE }),
  );
  await withTransaction(pool, (tx) => addSenderId(tx, account.id, SENDER, "verified"));
  return { accountId: account.id, key: key.token };
}

let nextSubscriber = 1_000_000;

/** n distinct recipients, dealt round robin over the given operators. */
export function recipients(n: number, operators: readonly Operator[]): string[] {
  return Array.from(
    { length: n },
    (_, i) => `+263${PREFIX[operators[i % operators.length] as Operator]}${nextSubscriber++}`,
  );
}

/**
 * One bulk send through the API, with any further fields of the body in `extra` (send_at);
 * resolves with the milliseconds it took to answer 202.
 */
export async function bulkSend(
  base: string,
  key: string,
  to: readonly string[],
  message = "Shiri bench: dispatch.",
  extra: Record<string, unknown> = {},
): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${base}/api/v1/sms/bulk`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ to, from: SENDER, message, ...extra }),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`bulk send answered ${res.status}: ${text.slice(0, 500)}`);
  return performance.now() - started;
}

/** Sends n messages in bulk requests of at most `chunk` recipients, one after another. */
export async function enqueue(
  base: string,
  key: string,
  n: number,
  operators: readonly Operator[],
  chunk = 10_000,
): Promise<{ ms: number; requests: number }> {
  const started = performance.now();
  let requests = 0;
  for (let sent = 0; sent < n; sent += chunk) {
    await bulkSend(base, key, recipients(Math.min(chunk, n - sent), operators));
    requests++;
  }
  return { ms: performance.now() - started, requests };
}
