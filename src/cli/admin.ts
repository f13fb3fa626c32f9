import { z } from "zod";
import { createAccount, findAccount, listAccounts } from "../accounts/accounts.ts";
import { apiKeySummaries, createApiKey, narrowApiKey, revokeApiKey } from "../accounts/api-keys.ts";
import { isScope, SCOPES, type Scope } from "../accounts/scopes.ts";
import {
  addSenderId,
  listSenderIds,
  MAX_SENDER_IDS_PER_ACCOUNT,
  removeSenderId,
  SENDER_ID_PATTERN,
  SenderIdLimitError,
  setSenderIdStatus,
  type VerificationStatus,
} from "../accounts/sender-ids.ts";
import { isNetwork } from "../cidr.ts";
import { type Pool, withTransaction } from "../db/pool.ts";
import { formatAmount, MAX_AMOUNT_TEXT, parseAmount } from "../domain/money.ts";
import { isPricedCurrency } from "../domain/pricing.ts";
import { topUp } from "../ledger/ledger.ts";
import { balanceNow } from "../lifecycle/open-mark.ts";
import { setAccountRateLimits } from "../limits/rate-limits.ts";
import {
  ACCOUNT_OPTION,
  accountIdOf,
  CommandError,
  type DataCommand,
  type OptionSpec,
  type ParsedArgs,
  requireOption,
  stringOption,
  UsageError,
  uuidOption,
} from "./args.ts";

/**
 * The admin commands: accounts, sender ids, top-ups and keys happen outside the public API.
 * Each is one entry of the table: its run checks the words (a usage error, before any database)
 * and returns what to do with the database, which gives the one JSON object or array printed.
 */
const ACCOUNT = ACCOUNT_OPTION;
const SENDER = [{ name: "SENDER", help: "the sender id: 3 to 11 letters or digits, as the account has it" }];

const MAX_LIMIT = 2_147_483_647;

/** --scopes a,b: each one of SCOPES; undefined when not given. */
function scopesOf(args: ParsedArgs): Scope[] | undefined {
  const value = stringOption(args, "scopes");
  if (value === undefined) return undefined;
  const words = value.split(",").map((w) => w.trim());
  const bad = words.find((w) => !isScope(w));
  if (bad !== undefined || words.length === 0)
    throw new UsageError(`--scopes takes some of ${SCOPES.join(", ")}, comma-separated; got "${value}"`);
  return words as Scope[];
}

/** An instant as the API takes a key's expires_at: an RFC 3339 date-time with its offset. */
const RFC_3339 = z.iso.datetime({ offset: true });

const KEY_POLICY: Record<string, OptionSpec> = {
  scopes: { type: "string", value: "LIST", help: `what it may do: some of ${SCOPES.join(", ")} (all)` },
  "allowed-ips": {
    type: "string",
    value: "CIDRS",
    help: "client addresses it may be used from, comma-separated (any)",
  },
  "expires-at": { type: "string", value: "TIME", help: "when it stops working, RFC 3339 (never)" },
};

/** A rate limit option: a whole number, 0 for no limit; undefined when not given. */
function limitOf(args: ParsedArgs, name: string): number | undefined {
  const value = stringOption(args, name);
  if (value === undefined) return undefined;
  const n = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 0 && n <= MAX_LIMIT))
    throw new UsageError(`--${name} must be a whole number, 0 for no limit, got "${value}"`);
  return n;
}

function senderOf(args: ParsedArgs): string {
  const address = args.positionals[0] ?? "";
  if (!SENDER_ID_PATTERN.test(address)) {
    throw new UsageError(`a sender id is 3 to 11 letters or digits, got "${address}"`);
  }
  return address;
}

function amountOf(args: ParsedArgs, name: string, allowZero: boolean): number {
  const text = requireOption(args, name);
  const amount = parseAmount(text);
  if (amount === null || (!allowZero && amount === 0)) {
    throw new UsageError(
      `--${name} must be a ${allowZero ? "" : "positive "}decimal amount like 25 or 12.50, at most ${MAX_AMOUNT_TEXT}, got "${text}"`,
    );
  }
  return amount;
}

function nameOf(args: ParsedArgs, max: number): string {
  const name = requireOption(args, "name");
  if (name.length > max) throw new UsageError(`--name must be at most ${max} characters`);
  return name;
}

async function existingAccount(pool: Pool, id: string) {
  const account = await findAccount(pool, id);
  if (!account) throw new CommandError(`no account ${id}`);
  return account;
}

async function balanceReport(pool: Pool, accountId: string) {
  const balance = await balanceNow(pool, accountId);
  if (!balance) throw new CommandError(`no account ${accountId}`);
  return {
    account_id: accountId,
    currency: balance.currency,
    available: balance.available,
    held: balance.held,
    available_display: formatAmount(balance.available),
  };
}

/** approve and reject: the same change to a different status. */
function statusCommand(verb: "approve" | "reject", status: VerificationStatus, summary: string): DataCommand {
  return {
    kind: "data",
    name: `sender-id ${verb}`,
    summary,
    details: [
      "Prints the sender id with its status now and before (previous_status); one already",
      `${status} stays so. Exit 1 when the account has no such sender id.`,
    ].join("\n"),
    options: ACCOUNT,
    positionals: SENDER,
    run: (args) => {
      const accountId = accountIdOf(args);
      const address = senderOf(args);
      return async (pool) => {
        await existingAccount(pool, accountId);
        const previous = await withTransaction(pool, (tx) =>
          setSenderIdStatus(tx, accountId, address, status),
        );
        if (!previous) throw new CommandError(`account ${accountId} has no sender id ${address}`);
        return { account_id: accountId, address, verification_status: status, previous_status: previous };
      };
    },
  };
}

export const ADMIN_COMMANDS: readonly DataCommand[] = [
  {
    kind: "data",
    name: "account create",
    summary: "create an account with its first API key (shown only this once)",
    details: "Prints account_id, api_key (the secret; only its hash is kept) and api_key_id.",
    options: {
      name: {
        type: "string",
        value: "NAME",
        help: "the account's name (at most 200 characters)",
        required: true,
      },
      balance: {
        type: "string",
        value: "AMOUNT",
        help: `opening balance, a decimal like 250.00 (at most ${MAX_AMOUNT_TEXT})`,
        required: true,
      },
      currency: { type: "string", value: "CODE", help: "the account's currency (default USD)" },
    },
    run: (args) => {
      const name = nameOf(args, 200);
      const balance = amountOf(args, "balance", true);
      const currency = (stringOption(args, "currency") ?? "USD").toUpperCase();
      if (!isPricedCurrency(currency))
        throw new UsageError(`--currency ${currency} is not priced by any carrier`);
      return async (pool) => {
        const { account, key } = await withTransaction(pool, (tx) =>
          createAccount(tx, { name, currency, openingBalance: balance }),
        );
        return { account_id: account.id, api_key: key.token, api_key_id: key.id };
      };
    },
  },
  {
    kind: "data",
    name: "account list",
    summary: "list every account with its available balance",
    details: "Amounts are in ten-thousandths of the currency (available_display is the decimal).",
    columns: ["account_id", "name", "currency", "available_display", "created_at"],
    run: () => async (pool) =>
      (await listAccounts(pool)).map((a) => ({
        account_id: a.id,
        name: a.name,
        currency: a.currency,
        available: a.available,
        available_display: formatAmount(a.available),
        created_at: a.created_at,
      })),
  },
  {
    kind: "data",
    name: "account show",
    summary: "show an account: balance, held charges, sender ids, key counts",
    details: "Amounts are in ten-thousandths of the currency (the _display fields are decimals).",
    options: ACCOUNT,
    run: (args) => {
      const accountId = accountIdOf(args);
      return async (pool) => {
        const account = await existingAccount(pool, accountId);
        const [balance, senders, keys] = await Promise.all([
          balanceReport(pool, account.id),
          listSenderIds(pool, account.id),
          apiKeySummaries(pool, account.id),
        ]);
        const active = keys.filter((k) => k.active).length;
        return {
          account_id: account.id,
          name: account.name,
          currency: account.currency,
          created_at: account.created_at,
          available: balance.available,
          held: balance.held,
          available_display: balance.available_display,
          held_display: formatAmount(balance.held),
          sender_ids: senders,
          api_keys_active: active,
          api_keys_revoked: keys.length - active,
        };
      };
    },
  },
  {
    kind: "data",
    name: "balance top-up",
    summary: "add to an account's balance",
    options: {
      ...ACCOUNT,
      amount: {
        type: "string",
        value: "AMOUNT",
        help: `a positive decimal like 50 or 12.50 (at most ${MAX_AMOUNT_TEXT})`,
        required: true,
      },
    },
    run: (args) => {
      const accountId = accountIdOf(args);
      const amount = amountOf(args, "amount", false);
      return async (pool) => {
        await existingAccount(pool, accountId);
        await withTransaction(pool, (tx) => topUp(tx, accountId, amount));
        return { ...(await balanceReport(pool, accountId)), topped_up: amount };
      };
    },
  },
  {
    kind: "data",
    name: "balance show",
    summary: "show an account's available and held balance",
    options: ACCOUNT,
    run: (args) => {
      const accountId = accountIdOf(args);
      return (pool) => balanceReport(pool, accountId);
    },
  },
  {
    kind: "data",
    name: "api-key create",
    summary: "create an API key for an account (the secret is shown only this once)",
    options: {
      ...ACCOUNT,
      name: {
        type: "string",
        value: "NAME",
        help: "what the key is for (at most 100 characters)",
        required: true,
      },
      ...KEY_POLICY,
    },
    run: (args) => {
      const accountId = accountIdOf(args);
      const name = nameOf(args, 100);
      const scopes = scopesOf(args);
      const ips = stringOption(args, "allowed-ips");
      const allowedIps = ips === undefined ? null : ips.split(",").map((c) => c.trim());
      if (allowedIps?.some((c) => !isNetwork(c)))
        throw new UsageError(
          `--allowed-ips takes addresses or CIDRs with no bit set past the prefix (10.0.0.0/8), comma-separated; got "${ips}"`,
        );
      const until = stringOption(args, "expires-at");
      // A date alone would be read as midnight UTC: the operator names the instant, as the API's caller does.
      if (until !== undefined && !(RFC_3339.safeParse(until).success && Date.parse(until) > Date.now()))
        throw new UsageError(`--expires-at must be a time to come, RFC 3339 with its offset; got "${until}"`);
      const expiresAt = until === undefined ? null : new Date(until);
      return async (pool) => {
        await existingAccount(pool, accountId);
        const key = await createApiKey(pool, accountId, name, {
          scopes: scopes ?? null,
          allowedIps,
          expiresAt,
        });
        return {
          account_id: accountId,
          api_key: key.token,
          api_key_id: key.id,
          name: key.name,
          scopes: key.scopes,
          allowed_ips: key.allowed_ips,
          expires_at: key.expires_at,
        };
      };
    },
  },
  {
    kind: "data",
    name: "api-key narrow",
    summary: "narrow an API key to fewer scopes (never more: a scope it lacks is not given)",
    details: "Prints the key as api-key list shows it.",
    options: {
      ...ACCOUNT,
      key: { type: "string", value: "KEY_ID", help: "the key's id (api_key_id), a UUID", required: true },
      scopes: { ...(KEY_POLICY.scopes as OptionSpec), required: true },
    },
    run: (args) => {
      const accountId = accountIdOf(args);
      const keyId = uuidOption(args, "key", "an API key id");
      const scopes = scopesOf(args) ?? [];
      return async (pool) => {
        await existingAccount(pool, accountId);
        const narrowing = await narrowApiKey(pool, accountId, keyId, scopes);
        if (narrowing.kind === "notFound")
          throw new CommandError(`account ${accountId} has no API key ${keyId}`);
        if (narrowing.kind === "nothingLeft")
          throw new CommandError(
            `API key ${keyId} holds none of ${scopes.join(", ")} (it holds ${narrowing.held?.join(", ") ?? "every scope"}): ` +
              "narrowing would leave it no scope, so it is left as it was; revoke it instead (api-key revoke)",
          );
        const after = (await apiKeySummaries(pool, accountId)).find((k) => k.api_key_id === keyId);
        return { account_id: accountId, ...after };
      };
    },
  },
  {
    kind: "data",
    name: "api-key list",
    summary: "list an account's API keys (never their secrets)",
    options: ACCOUNT,
    run: (args) => {
      const accountId = accountIdOf(args);
      return async (pool) => apiKeySummaries(pool, (await existingAccount(pool, accountId)).id);
    },
  },
  {
    kind: "data",
    name: "api-key revoke",
    summary: "revoke an API key: its next request is refused",
    details:
      "Prints the key as api-key list shows it; revoking a revoked key changes nothing (was_active: false).",
    options: {
      ...ACCOUNT,
      key: { type: "string", value: "KEY_ID", help: "the key's id (api_key_id), a UUID", required: true },
    },
    run: (args) => {
      const accountId = accountIdOf(args);
      const keyId = uuidOption(args, "key", "an API key id");
      return async (pool) => {
        await existingAccount(pool, accountId);
        const before = (await apiKeySummaries(pool, accountId)).find((k) => k.api_key_id === keyId);
        if (!before || (await revokeApiKey(pool, accountId, keyId)) !== "revoked") {
          throw new CommandError(`account ${accountId} has no API key ${keyId}`);
        }
        const after = (await apiKeySummaries(pool, accountId)).find((k) => k.api_key_id === keyId);
        return { account_id: accountId, ...after, was_active: before.active };
      };
    },
  },
  {
    kind: "data",
    name: "sender-id add",
    summary: `add a sender id to an account, pending approval unless --approved (at most ${MAX_SENDER_IDS_PER_ACCOUNT})`,
    details: [
      "A new sender id is pending (it cannot send) unless --approved is given; approve it later with",
      "`shiri sender-id approve`. One the account already has is left unchanged: the output says",
      "added: false with its current status, and an --approved or --pending that disagrees with that",
      "status fails (exit 1) rather than change it. A fourth sender id fails (exit 1): remove one first.",
    ].join("\n"),
    options: {
      ...ACCOUNT,
      approved: { type: "boolean", help: "add it approved (verified): it can send at once" },
      pending: { type: "boolean", help: "add it pending approval (the default; kept for old scripts)" },
    },
    positionals: SENDER,
    run: (args) => {
      const accountId = accountIdOf(args);
      const address = senderOf(args);
      if (args.values.approved && args.values.pending) {
        throw new UsageError("--approved and --pending cannot both be given");
      }
      const asked: VerificationStatus | null = args.values.approved
        ? "verified"
        : args.values.pending
          ? "pending"
          : null;
      return async (pool) => {
        await existingAccount(pool, accountId);
        let sender: Awaited<ReturnType<typeof addSenderId>>;
        try {
          sender = await withTransaction(pool, (tx) =>
            addSenderId(tx, accountId, address, asked ?? "pending"),
          );
        } catch (err) {
          if (err instanceof SenderIdLimitError) throw new CommandError(`${err.message}; remove one first`);
          throw err;
        }
        if (!sender.added && asked && sender.verification_status !== asked) {
          throw new CommandError(
            `${address} is already on account ${accountId} as ${sender.verification_status}; add leaves it so (change it with \`shiri sender-id approve|reject|remove\`)`,
          );
        }
        return { account_id: accountId, ...sender };
      };
    },
  },
  {
    kind: "data",
    name: "sender-id list",
    summary: "list an account's sender ids and their status",
    options: ACCOUNT,
    run: (args) => {
      const accountId = accountIdOf(args);
      return async (pool) => listSenderIds(pool, (await existingAccount(pool, accountId)).id);
    },
  },
  statusCommand("approve", "verified", "approve a sender id (status verified): it can send"),
  statusCommand(
    "reject",
    "rejected",
    "reject a sender id (status rejected): it cannot send, and still counts",
  ),
  {
    kind: "data",
    name: "sender-id remove",
    summary: "remove a sender id from an account, freeing its place",
    details: "Messages already sent keep their sender id. Exit 1 when the account has no such sender id.",
    options: ACCOUNT,
    positionals: SENDER,
    run: (args) => {
      const accountId = accountIdOf(args);
      const address = senderOf(args);
      return async (pool) => {
        await existingAccount(pool, accountId);
        const removed = await withTransaction(pool, (tx) => removeSenderId(tx, accountId, address));
        if (!removed) throw new CommandError(`account ${accountId} has no sender id ${address}`);
        return { account_id: accountId, ...removed, removed: true };
      };
    },
  },
  {
    kind: "data",
    name: "rate-limit set",
    summary: "set an account's own rate limits, in force from its next request in every API process",
    details: [
      "--requests-per-second applies to the account and to each of its keys; --recipients-per-minute,",
      "when given, to the recipients its sends may reach a minute (left as it was when not). 0 is no",
      "limit. Prints the limits as stored: a null field follows the configured default.",
    ].join("\n"),
    options: {
      ...ACCOUNT,
      "requests-per-second": {
        type: "string",
        value: "N",
        help: "requests a second (0: no limit)",
        required: true,
      },
      "recipients-per-minute": { type: "string", value: "M", help: "recipients a minute (0: no limit)" },
    },
    run: (args) => {
      const accountId = accountIdOf(args);
      const requestsPerSecond = limitOf(args, "requests-per-second") ?? 0;
      const recipientsPerMinute = limitOf(args, "recipients-per-minute");
      return async (pool) => {
        await existingAccount(pool, accountId);
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
    },
  },
];
