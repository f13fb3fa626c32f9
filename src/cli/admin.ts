import { createAccount, findAccount } from "../accounts/accounts.ts";
import { createApiKey } from "../accounts/api-keys.ts";
import { addSenderId, SENDER_ID_PATTERN, SenderIdLimitError } from "../accounts/sender-ids.ts";
import { type AuditReport, audit } from "../audit/audit.ts";
import { type Pool, withTransaction } from "../db/pool.ts";
import { formatAmount, parseAmount } from "../domain/money.ts";
import { isPricedCurrency } from "../domain/pricing.ts";
import { balanceOf, topUp } from "../ledger/ledger.ts";
import { type ParsedArgs, parseOptions, requireOption, UsageError } from "./args.ts";
import { rateLimitSet } from "./rate-limit.ts";

/**
 * The admin commands: accounts, sender ids, top-ups and keys happen outside the public API.
 * Each returns the one JSON object the CLI prints.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function accountIdOf(args: ParsedArgs): string {
  const id = requireOption(args, "account");
  if (!UUID.test(id)) throw new UsageError(`--account must be an account id (a UUID), got "${id}"`);
  return id;
}

function amountOf(args: ParsedArgs, name: string, allowZero: boolean): number {
  const text = requireOption(args, name);
  const amount = parseAmount(text);
  if (amount === null || (!allowZero && amount === 0)) {
    throw new UsageError(
      `--${name} must be a ${allowZero ? "" : "positive "}decimal amount like 25 or 12.50, got "${text}"`,
    );
  }
  return amount;
}

async function existingAccount(pool: Pool, id: string) {
  const account = await findAccount(pool, id);
  if (!account) throw new UsageError(`no account ${id}`);
  return account;
}

async function balanceReport(pool: Pool, accountId: string) {
  const balance = await balanceOf(pool, accountId);
  if (!balance) throw new UsageError(`no account ${accountId}`);
  return {
    account_id: accountId,
    currency: balance.currency,
    available: balance.available,
    held: balance.held,
    available_display: formatAmount(balance.available),
  };
}

export type AdminCommand = (pool: Pool, argv: string[]) => Promise<object>;

export const ADMIN_COMMANDS: Record<string, AdminCommand> = {
  "account create": async (pool, argv) => {
    const args = parseOptions(
      argv,
      { name: { type: "string" }, balance: { type: "string" }, currency: { type: "string" } },
      0,
    );
    const name = requireOption(args, "name");
    if (name.length > 200) throw new UsageError("--name must be at most 200 characters");
    const balance = amountOf(args, "balance", true);
    const currency = (typeof args.values.currency === "string" ? args.values.currency : "USD").toUpperCase();
    if (!isPricedCurrency(currency))
      throw new UsageError(`--currency ${currency} is not priced by any carrier`);
    const { account, key } = await withTransaction(pool, (tx) =>
      createAccount(tx, { name, currency, openingBalance: balance }),
    );
    return { account_id: account.id, api_key: key.token, api_key_id: key.id };
  },

  "sender-id add": async (pool, argv) => {
    const args = parseOptions(argv, { account: { type: "string" }, pending: { type: "boolean" } }, 1);
    const accountId = accountIdOf(args);
    const address = args.positionals[0] ?? "";
    if (!SENDER_ID_PATTERN.test(address)) {
      throw new UsageError(`a sender id is 3 to 11 letters or digits, got "${address}"`);
    }
    await existingAccount(pool, accountId);
    try {
      const sender = await withTransaction(pool, (tx) =>
        addSenderId(tx, accountId, address, args.values.pending ? "pending" : "verified"),
      );
      return { account_id: accountId, ...sender };
    } catch (err) {
      if (err instanceof SenderIdLimitError) throw new UsageError(err.message);
      throw err;
    }
  },

  "balance top-up": async (pool, argv) => {
    const args = parseOptions(argv, { account: { type: "string" }, amount: { type: "string" } }, 0);
    const accountId = accountIdOf(args);
    const amount = amountOf(args, "amount", false);
    await existingAccount(pool, accountId);
    await withTransaction(pool, (tx) => topUp(tx, accountId, amount));
    return { ...(await balanceReport(pool, accountId)), topped_up: amount };
  },

  "balance show": async (pool, argv) => {
    const args = parseOptions(argv, { account: { type: "string" } }, 0);
    return balanceReport(pool, accountIdOf(args));
  },

  "api-key create": async (pool, argv) => {
    const args = parseOptions(argv, { account: { type: "string" }, name: { type: "string" } }, 0);
    const accountId = accountIdOf(args);
    const name = requireOption(args, "name");
    if (name.length > 100) throw new UsageError("--name must be at most 100 characters");
    await existingAccount(pool, accountId);
    const key = await createApiKey(pool, accountId, name);
    return { account_id: accountId, api_key: key.token, api_key_id: key.id, name: key.name };
  },

  "rate-limit set": rateLimitSet,
};

function positiveNumberOf(args: ParsedArgs, name: string, fallback: number): number {
  const value = args.values[name];
  if (value === undefined) return fallback;
  const n = typeof value === "string" && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!(n > 0)) throw new UsageError(`--${name} must be a positive number, got "${String(value)}"`);
  return n;
}

/** `shiri audit`: the report, whose `clean` decides the exit status (1 when anything is listed). */
export async function auditCommand(pool: Pool, argv: string[]): Promise<AuditReport> {
  const args = parseOptions(
    argv,
    { "stuck-minutes": { type: "string" }, "receipt-hours": { type: "string" } },
    0,
  );
  return audit(pool, {
    stuckMinutes: positiveNumberOf(args, "stuck-minutes", 60),
    receiptHours: positiveNumberOf(args, "receipt-hours", 48),
  });
}
