import { ConfigError, loadConfig } from "../config.ts";
import { openDatabase } from "../db/database.ts";
import { migrate } from "../db/migrate.ts";
import { createPool } from "../db/pool.ts";
import { formatAmount } from "../domain/money.ts";
import { createLogger } from "../logger.ts";
import { databaseTimeouts, type Role, startService } from "../service.ts";
import { ADMIN_COMMANDS, auditCommand } from "./admin.ts";
import { parseOptions, UsageError } from "./args.ts";

const USAGE = `usage: shiri <command>
  start [--role api|worker|all]                      run the service (default role: all)
  migrate                                            apply database migrations
  simulator                                          run the carrier simulators alone
  account create --name N --balance D [--currency USD]
  sender-id add --account ID SENDER [--pending]
  balance top-up --account ID --amount D
  balance show --account ID
  api-key create --account ID --name N
  rate-limit set --account ID --requests-per-second N [--recipients-per-minute M]
  audit [--stuck-minutes 60] [--receipt-hours 48]    check balances against the ledger; exit 1 if not clean
The database is DATABASE_URL when set, else this checkout's embedded Postgres (in DATA_DIR).`;

const ROLES: readonly Role[] = ["api", "worker", "all"];

async function start(argv: string[]): Promise<void> {
  const args = parseOptions(argv, { role: { type: "string" } }, 0);
  const role = (args.values.role ?? "all") as Role;
  if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(", ")}`);
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const service = await startService(config, logger, role);
  if (service.devAccount) {
    const a = service.devAccount;
    const base = `http://localhost:${service.port ?? config.PORT}`;
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
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    service.stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", () => shutdown("SIGINT"));
  process.once("SIGTERM", () => shutdown("SIGTERM"));
}

/**
 * The admin commands and migrate reach the service's database, starting the embedded one if
 * needed. Admin commands migrate it first, so they work on a fresh checkout.
 */
async function withDatabase(
  run: (pool: ReturnType<typeof createPool>) => Promise<object>,
  opts: { migrateFirst: boolean },
): Promise<void> {
  const config = loadConfig();
  const database = await openDatabase(config);
  const pool = createPool(database.url, 2, databaseTimeouts(config));
  try {
    if (opts.migrateFirst) await migrate(pool);
    const result = await run(pool);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await pool.end();
    await database.stop();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === "start") return start(argv.slice(1));
  if (command === "migrate") {
    parseOptions(argv.slice(1), {}, 0);
    return withDatabase(migrate, { migrateFirst: false });
  }
  if (command === "simulator") {
    const { runSimulators } = await import("../../carriers/simulator/main.ts");
    return runSimulators();
  }
  if (command === "audit") {
    return withDatabase(
      async (pool) => {
        const report = await auditCommand(pool, argv.slice(1));
        if (!report.clean) process.exitCode = 1;
        return report;
      },
      { migrateFirst: true },
    );
  }
  const admin = ADMIN_COMMANDS[`${command} ${sub ?? ""}`];
  if (!admin) throw new UsageError(`unknown command "${[command, sub].filter(Boolean).join(" ")}"`);
  return withDatabase((pool) => admin(pool, rest), { migrateFirst: true });
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`shiri: ${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  // The environment, not the command line, is wrong: the usage would not help.
  if (err instanceof ConfigError) {
    process.stderr.write(`shiri: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`shiri: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
