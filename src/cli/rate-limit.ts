import { findAccount } from "../accounts/accounts.ts";
import { withTransaction } from "../db/pool.ts";
import { setAccountRateLimits } from "../limits/rate-limits.ts";
import type { AdminCommand } from "./admin.ts";
import { type ParsedArgs, parseOptions, requireOption, UsageError } from "./args.ts";

/**
 * `shiri rate-limit set --account ID --requests-per-second N [--recipients-per-minute M]`:
 * an account's own rate limits (src/limits), taking effect on its next request in every API
 * process. N applies to the account and to each of its keys; M, when given, to the recipients its
 * sends may reach per minute (left as it was when not). 0 is no limit. Prints the account's
 * limits as stored: a null field follows the configured default.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_LIMIT = 2_147_483_647;

function limitOf(args: ParsedArgs, name: string): number | undefined {
  const value = args.values[name];
  if (value === undefined) return undefined;
  const text = typeof value === "string" ? value.trim() : "";
  const n = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 0 && n <= MAX_LIMIT))
    throw new UsageError(`--${name} must be a whole number, 0 for no limit, got "${String(value)}"`);
  return n;
}

export const rateLimitSet: AdminCommand = async (pool, argv) => {
  const args = parseOptions(
    argv,
    {
      account: { type: "string" },
      "requests-per-second": { type: "string" },
      "recipients-per-minute": { type: "string" },
    },
    0,
  );
  const accountId = requireOption(args, "account");
  if (!UUID.test(accountId))
    throw new UsageError(`--account must be an account id (a UUID), got "${accountId}"`);
  requireOption(args, "requests-per-second");
  const requestsPerSecond = limitOf(args, "requests-per-second") as number;
  const recipientsPerMinute = limitOf(args, "recipients-per-minute");
  // Not a usage mistake: the command is right, the account is not there (exit 1, one line).
  if (!(await findAccount(pool, accountId))) throw new Error(`no account ${accountId}`);
  const saved = await withTransaction(pool, (tx) =>
    setAccountRateLimits(tx, accountId, {
      requestsPerSecond,
      ...(recipientsPerMinute === undefined ? {} : { recipientsPerMinute }),
    }),
  );
  return {
    account_id: saved.account_id,
    requests_per_second: saved.requests_per_second,
    recipients_per_minute: saved.recipients_per_minute,
    updated_at: saved.updated_at,
  };
};
