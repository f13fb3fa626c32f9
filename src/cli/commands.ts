import { constants } from "node:os";
import { type AuditReport, audit } from "../audit/audit.ts";
import { loadConfig } from "../config.ts";
import { migrate, migrationOptions } from "../db/migrate.ts";
import { isDatabaseOutOfReach } from "../db/pool.ts";
import { formatAmount } from "../domain/money.ts";
import { createLogger } from "../logger.ts";
import type { Role, RunningService } from "../service.ts";
import { loadSimulator } from "../simulator-loader.ts";
import { ADMIN_COMMANDS } from "./admin.ts";
import { type Command, type ParsedArgs, stringOption, UsageError } from "./args.ts";
import { CARRIER_COMMANDS } from "./carrier.ts";
import { INBOUND_COMMANDS, SIMULATE_MO } from "./inbound.ts";
import { SEND_DEFAULT_COMMANDS } from "./send-defaults.ts";
import { TEXT_COMMANDS } from "./text.ts";
import { lowerWorkerPriority } from "./worker-priority.ts";

/**
 * Every `shiri` command, in the order `shiri --help` lists them. Adding a command is adding an
 * entry here (or to ADMIN_COMMANDS): the parser, the help and the dispatcher all read this table.
 */

const ROLES: readonly Role[] = ["api", "worker", "all"];

async function start(args: ParsedArgs): Promise<void> {
  const role = (stringOption(args, "role") ?? "all") as Role;
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, { outage: isDatabaseOutOfReach });
  // From the first moment: a signal while the service starts (waiting for another process's
  // migration, say) ends the start-up with a line that says so; once it runs, it stops in order.
  let service: RunningService | null = null;
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    if (service === null) {
      logger.warn({ signal }, "signal during start-up: exiting before the service started");
      process.exit(128 + constants.signals[signal]);
    }
    logger.info({ signal }, "shutting down");
    service.stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  // on, not once: a second signal while it drains (Ctrl-C under npm start sends SIGINT twice, to
  // the group and forwarded by npm) must find a handler that ignores it, not Node's default exit.
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  // Before the service starts, so that the threads it starts inherit the priority.
  if (role === "worker") lowerWorkerPriority(config.WORKER_NICE, logger);
  // Loaded here, not at the top: the whole service takes seconds to import, which every other command would pay.
  const { startService } = await import("../service.ts");
  const started = await startService(config, logger, role);
  service = started;
  if (started.devAccount) {
    const a = started.devAccount;
    const base = `http://localhost:${started.port ?? config.PORT}`;
    process.stdout.write(
      [
        "",
        "  Shiri development account created (the key is shown only this once):",
        `    account id : ${a.accountId}`,
        `    api key    : ${a.apiKey}`,
        `    sender id  : ${a.senderId}`,
        `    balance    : ${formatAmount(a.balance)} ${a.currency}`,
        "  Try:",
        `    curl -s ${base}/api/v1/sms -H 'Authorization: Bearer ${a.apiKey}' \\`,
        `      -H 'Content-Type: application/json' -d '{"to":"+263771234567","from":"${a.senderId}","message":"Hello"}'`,
        "",
      ].join("\n"),
    );
  }
}

function positiveNumberOf(args: ParsedArgs, name: string, fallback: number): number {
  const value = stringOption(args, name);
  if (value === undefined) return fallback;
  const n = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!(n > 0)) throw new UsageError(`--${name} must be a positive number, got "${value}"`);
  return n;
}

export const COMMANDS: readonly Command[] = [
  {
    kind: "process",
    name: "start",
    summary: "run the service (API, dispatch workers, or both) until SIGINT or SIGTERM",
    details:
      "On the first start of an empty embedded database it creates a development account and prints its key.",
    options: {
      role: { type: "string", value: "ROLE", help: "api, worker or all (the default)", choices: ROLES },
    },
    run: start,
  },
  {
    kind: "data",
    name: "migrate",
    summary: "apply the database migrations not yet applied",
    details:
      "Prints the migrations it applied (applied), the database's latest (current) and those it has that " +
      "this version does not know (unknown: a newer version migrated it; a warning on stderr says so). " +
      "Safe to run twice at once.",
    migrates: true,
    run: () => {
      const config = loadConfig();
      return (pool) =>
        migrate(pool, migrationOptions(config, createLogger(config.LOG_LEVEL, { stderr: true })));
    },
  },
  {
    kind: "process",
    name: "simulator",
    summary: "run the carrier simulators alone (SMPP, one per operator)",
    run: async () => {
      const simulator = await loadSimulator();
      return simulator.runAlone();
    },
  },
  SIMULATE_MO,
  ...ADMIN_COMMANDS,
  ...SEND_DEFAULT_COMMANDS,
  ...TEXT_COMMANDS,
  ...INBOUND_COMMANDS,
  ...CARRIER_COMMANDS,
  {
    kind: "data",
    name: "audit",
    summary: "check balances against the ledger and look for stuck money; exit 1 if not clean",
    details: [
      "Recomputes every balance from the ledger, and lists holds of final messages, messages not final",
      "after --stuck-minutes, and accepted segments without a receipt after --receipt-hours.",
    ].join("\n"),
    options: {
      "stuck-minutes": {
        type: "string",
        value: "N",
        help: "a message not final after N minutes is stuck (60)",
      },
      "receipt-hours": {
        type: "string",
        value: "N",
        help: "a segment without a receipt after N hours is listed (48)",
      },
    },
    run: (args) => {
      const options = {
        stuckMinutes: positiveNumberOf(args, "stuck-minutes", 60),
        receiptHours: positiveNumberOf(args, "receipt-hours", 48),
      };
      return async (pool): Promise<AuditReport> => {
        const report = await audit(pool, options);
        if (!report.clean) {
          // The report is on stdout; the failure is said in one line, as every failure is.
          process.stderr.write(`shiri: audit not clean: ${auditFindings(report)}\n`);
          process.exitCode = 1;
        }
        return report;
      };
    },
  },
];

/** What a report that is not clean found, in words: "1 balance mismatch, 300 stuck messages". */
function auditFindings(report: AuditReport): string {
  const kinds: [number, string, string][] = [
    [report.balance_mismatches.count, "balance mismatch", "balance mismatches"],
    [report.holds_without_live_message.count, "hold without a live message", "holds without a live message"],
    [report.stuck_messages.count, "stuck message", "stuck messages"],
    [report.parts_without_receipts.count, "part without a receipt", "parts without receipts"],
  ];
  return kinds
    .filter(([count]) => count > 0)
    .map(([count, one, many]) => `${count} ${count === 1 ? one : many}`)
    .join(", ");
}
