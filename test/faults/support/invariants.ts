import { execFile } from "node:child_process";
import { expect } from "vitest";
import { shiriCommand } from "../../../bench/lib/shiri-process.ts";
import { OPERATORS } from "../../../carriers/index.ts";
import { waitFor } from "../../support/wait-for.ts";
import type { FaultHarness } from "./harness.ts";

/**
 * What must hold after every fault, checked the same way for each scenario:
 * every accepted message final within a bound; at most one submit per segment at the SMSC, except
 * the in-flight window the scenario allows (counted and reported); `shiri audit` clean; no Shiri
 * process exited but one the scenario killed; no 5xx answer but 503.
 */

export interface InvariantOptions {
  /** Names the scenario in the report line. */
  scenario: string;
  /** The messages the API accepted during the scenario. */
  ids: readonly string[];
  /** How long after the fault every message must be final. */
  finalWithinMs: number;
  /** When the fault came (Date.now()); by default when the check starts. */
  faultAt?: number;
  /**
   * Most segments the SMSC may have taken twice (the in-flight window of this fault); a function
   * is asked once every message is final (a fault that goes on while they are dispatched).
   */
  allowedResends: number | (() => number);
  /**
   * Every resend must have been counted by the live worker as a submit of unknown outcome
   * (`shiri_smpp_submits_total{status="unknown:…"}`): resends ≤ that count.
   */
  resendsCountedAsUnknown?: boolean;
  /** Destinations (as sent, with +) that may be among the resent: those on the wire at the fault. */
  mayRepeat?: ReadonlySet<string> | (() => ReadonlySet<string>);
  /**
   * Indices into `statuses` (from, to) where "no answer" is expected: the API was killed on
   * purpose, so its clients saw resets and refused connections in that span and only there.
   */
  resetWindow?: readonly [number, number];
}

export interface InvariantReport {
  scenario: string;
  messages: number;
  success: number;
  failed: number;
  /** Segments the SMSC accepted more than once, counted once per extra copy. */
  resends: number;
  /** From the fault to every message final, as polled every 200 ms. */
  finalAfterMs: number;
  /** What the live worker counted: submits of unknown outcome, late answers recorded, throttles. */
  counted: { unknown: number; lateRecorded: number; throttled: number };
  statuses: Record<string, number>;
}

export async function checkInvariants(h: FaultHarness, o: InvariantOptions): Promise<InvariantReport> {
  const ids = [...o.ids];
  const faultAt = o.faultAt ?? Date.now();
  // 1. Every accepted message final within the bound.
  const finalCount = async () =>
    (
      await h.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND status IN ('success', 'failed')",
        [ids],
      )
    ).rows[0]?.n ?? 0;
  await waitFor(async () => (await finalCount()) === ids.length, {
    timeoutMs: Math.max(0, faultAt + o.finalWithinMs - Date.now()),
    intervalMs: 200,
    what: `${o.scenario}: all ${ids.length} accepted messages final`,
  }).catch(async (err: unknown) => {
    const { rows } = await h.sql.query<{ status: string; n: number; attempts: number; locked: boolean }>(
      `SELECT status, count(*)::int AS n, max(attempts)::int AS attempts, bool_or(locked_until > now()) AS locked
         FROM messages WHERE id = ANY($1) AND status NOT IN ('success', 'failed') GROUP BY status`,
      [ids],
    );
    throw new Error(`${String(err)}\nnot final: ${JSON.stringify(rows)}\n${outputs(h)}`);
  });
  const finalAfterMs = Date.now() - faultAt;
  const { rows: messages } = await h.sql.query<{ to: string; status: string }>(
    `SELECT "to", status FROM messages WHERE id = ANY($1)`,
    [ids],
  );

  // 2. Submits per segment, as the SMSCs counted them.
  const wire = new Map(messages.map((m) => [m.to.replace(/^\+/, ""), m]));
  const copies = new Map<string, number>();
  const reached = new Set<string>();
  for (const op of OPERATORS) {
    for (const a of h.sims.get(op).accepted) {
      if (!wire.has(a.destination_addr)) continue;
      reached.add(a.destination_addr);
      const key = `${a.destination_addr}|${a.text}|${a.concat?.part ?? 1}`;
      copies.set(key, (copies.get(key) ?? 0) + 1);
    }
  }
  const repeated = [...copies].filter(([, n]) => n > 1);
  const resends = repeated.reduce((sum, [, n]) => sum + n - 1, 0);
  const counted = await workerCounters(h);
  const statuses: Record<string, number> = {};
  for (const s of h.statuses) statuses[s] = (statuses[s] ?? 0) + 1;
  const report: InvariantReport = {
    scenario: o.scenario,
    messages: ids.length,
    finalAfterMs,
    success: messages.filter((m) => m.status === "success").length,
    failed: messages.filter((m) => m.status === "failed").length,
    resends,
    counted,
    statuses,
  };
  console.info(`[faults] ${JSON.stringify(report)}`);
  const allowed = typeof o.allowedResends === "function" ? o.allowedResends() : o.allowedResends;
  expect(
    resends,
    `${o.scenario}: segments submitted twice ${JSON.stringify(repeated)}\n${outputs(h)}`,
  ).toBeLessThanOrEqual(allowed);
  if (o.resendsCountedAsUnknown)
    expect(resends, `${o.scenario}: more resends than submits counted unknown`).toBeLessThanOrEqual(
      counted.unknown,
    );
  const mayRepeat = typeof o.mayRepeat === "function" ? o.mayRepeat() : o.mayRepeat;
  if (mayRepeat) {
    for (const [key] of repeated)
      expect(mayRepeat.has(`+${key.split("|")[0]}`), `${key} resent but not on the wire at the fault`).toBe(
        true,
      );
  }
  // A message the carrier took is one Shiri calls success, and one it calls success reached it.
  for (const m of messages)
    if (m.status === "success")
      expect(reached.has(m.to.replace(/^\+/, "")), `${m.to} success but never submitted`).toBe(true);

  // 3. The ledger agrees with the balances and no final message holds money.
  const audit = await shiriAudit(h.db.url);
  expect(audit.code, `shiri audit not clean:\n${audit.stdout}${audit.stderr}`).toBe(0);

  // 4. No process died but the ones killed on purpose.
  for (const p of h.processes)
    if (!h.killed.has(p.pid)) expect(p.exited(), `process ${p.pid} exited:\n${p.output()}`).toBe(false);

  // 5. No 5xx but 503, and every request answered.
  const [from, to] = o.resetWindow ?? [0, 0];
  const bad = h.statuses.filter((s, i) => (s === 0 && (i < from || i >= to)) || (s >= 500 && s !== 503));
  expect(bad, `${o.scenario}: answers ${JSON.stringify(statuses)}`).toEqual([]);
  return report;
}

/** What the live processes last logged (warnings and errors), for a failure's message. */
function outputs(h: FaultHarness): string {
  return [`api ${h.api.pid}:`, h.api.output(), `worker ${h.worker.pid}:`, h.worker.output()].join("\n");
}

/** `shiri audit` as an operator runs it: its exit status says clean (0) or not (1). */
export function shiriAudit(databaseUrl: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const shiri = shiriCommand();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [shiri.bin, "audit"],
      {
        timeout: 60_000,
        killSignal: "SIGKILL",
        env: { ...process.env, ...shiri.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent", NO_COLOR: "1" },
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number")
          reject(new Error(`shiri audit failed to run: ${err.message}`));
        else resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
  });
}

/** The live worker's own counters of the in-flight window (zero when it was killed). */
async function workerCounters(h: FaultHarness): Promise<InvariantReport["counted"]> {
  if (h.worker.exited()) return { unknown: 0, lateRecorded: 0, throttled: 0 };
  const res = await fetch(`http://127.0.0.1:${h.worker.metricsPort}/metrics`, {
    signal: AbortSignal.timeout(5_000),
  });
  const lines = (await res.text()).split("\n");
  const sum = (name: string, label: RegExp) =>
    lines
      .filter((l) => l.startsWith(`${name}{`) && label.test(l))
      .reduce((n, l) => n + (Number(l.slice(l.lastIndexOf(" ") + 1)) || 0), 0);
  return {
    unknown: sum("shiri_smpp_submits_total", /status="unknown/),
    lateRecorded: sum("shiri_smpp_late_answers_total", /outcome="recorded"/),
    throttled: sum("shiri_smpp_throttled_total", /./),
  };
}
