import { OPERATORS, type Operator } from "../../carriers/index.ts";
import {
  type RunningSimulators,
  type SimulatorBehaviour,
  startSimulators,
} from "../../carriers/simulator/index.ts";
import type { Pool } from "../../src/db/pool.ts";
import { call, startTestService, type TestAccount, type TestService } from "./service.ts";
import { waitFor } from "./wait-for.ts";

/** Service settings that make faults show up in seconds instead of minutes. */
export const FAST_DISPATCH_ENV: Record<string, string> = {
  START_SIMULATORS: "false",
  METRICS_PORT: "0",
  DISPATCH_POLL_MS: "20",
  BIND_LEASE_SECONDS: "2",
  BREAKER_RESET_MS: "500",
  BREAKER_VOLUME_THRESHOLD: "5",
  BREAKER_WINDOW_MS: "2000",
  RECEIPT_SWEEP_MS: "200",
};

/** The environment that points a service's SMPP settings at the given simulator ports. */
export function smppEnv(
  ports: Partial<Record<Operator, number>>,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const op of OPERATORS) {
    const port = ports[op];
    if (port !== undefined) {
      env[`SMPP_${op.toUpperCase()}_PORT`] = String(port);
      env[`SMPP_${op.toUpperCase()}_HOST`] = "127.0.0.1";
      env[`SMPP_${op.toUpperCase()}_ENQUIRE_LINK_INTERVAL_MS`] = "1000";
      env[`SMPP_${op.toUpperCase()}_RESPONSE_TIMEOUT_MS`] = "2000";
    }
  }
  return { ...FAST_DISPATCH_ENV, ...env, ...extra };
}

export interface DispatchHarness {
  t: TestService;
  sims: RunningSimulators;
  acct: TestAccount;
  pool: Pool;
  send(to: string, message: string): Promise<string>;
  bulk(to: string[], message: string): Promise<string[]>;
  statusOf(
    ids: readonly string[],
  ): Promise<Map<string, { status: string; operator_response: string; delivered: boolean }>>;
  /** Waits until every message is final (success with a receipt state, or failed). */
  waitUntilSettled(ids: readonly string[], opts?: { timeoutMs?: number; delivered?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Simulators on ephemeral loopback ports and an API process pointed at them that runs no worker:
 * the test starts (and stops) the workers itself (`t.startAnother("worker")`).
 */
export async function startApiBesideSimulators(): Promise<{ sims: RunningSimulators; t: TestService }> {
  const sims = await startSimulators({
    host: "127.0.0.1",
    perOperator: Object.fromEntries(OPERATORS.map((op) => [op, { port: 0 }])),
  });
  return { sims, t: await startTestService(smppEnv(sims.ports), "api") };
}

/** Simulators on ephemeral loopback ports and the whole service (api + worker) pointed at them. */
export async function startDispatchHarness(
  opts: {
    behaviour?: Partial<Record<Operator, Partial<SimulatorBehaviour>>>;
    env?: Record<string, string>;
  } = {},
): Promise<DispatchHarness> {
  const sims = await startSimulators({
    host: "127.0.0.1",
    perOperator: Object.fromEntries(
      OPERATORS.map((op) => [op, { port: 0, behaviour: opts.behaviour?.[op] ?? {} }]),
    ),
  });
  const t = await startTestService(smppEnv(sims.ports, opts.env), "all");
  const acct = await t.account({ balance: 1_000_000_000 });
  const pool = t.service.pool;
  const statusOf: DispatchHarness["statusOf"] = async (ids) => {
    const { rows } = await pool.query<{
      id: string;
      status: string;
      operator_response: string;
      delivered: boolean;
    }>(
      "SELECT id, status, operator_response, delivered_at IS NOT NULL AS delivered FROM messages WHERE id = ANY($1)",
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r]));
  };
  return {
    t,
    sims,
    acct,
    pool,
    async send(to, message) {
      const res = await call(t.base, "POST", "/api/v1/sms", {
        headers: acct.headers,
        body: { to, from: "SHIRI", message },
      });
      if (res.status !== 202) throw new Error(`send failed: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body as { id: string }).id;
    },
    async bulk(to, message) {
      const res = await call(t.base, "POST", "/api/v1/sms/bulk", {
        headers: acct.headers,
        body: { to, from: "SHIRI", message },
      });
      if (res.status !== 202) throw new Error(`bulk failed: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    },
    statusOf,
    async waitUntilSettled(ids, { timeoutMs = 20_000, delivered = false } = {}) {
      await waitFor(
        async () => {
          const states = await statusOf(ids);
          return ids.every((id) => {
            const s = states.get(id);
            if (!s) return false;
            if (s.status === "failed") return true;
            return (
              s.status === "success" && (!delivered || s.delivered || s.operator_response !== "ESME_ROK")
            );
          });
        },
        { timeoutMs, intervalMs: 50, what: `${ids.length} messages to settle` },
      );
    },
    async stop() {
      await t.stop();
      await sims.stop();
    },
  };
}
