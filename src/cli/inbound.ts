import { OPERATORS } from "../../carriers/types.ts";
import { findAccount } from "../accounts/accounts.ts";
import { loadConfig } from "../config.ts";
import type { Pool } from "../db/pool.ts";
import { MO_CONCATENATIONS, MO_ENCODINGS } from "../domain/mobile-originated.ts";
import {
  addInboundNumber,
  InboundNumberTakenError,
  inboundNumberOf,
  listInboundNumbers,
  removeInboundNumber,
} from "../inbound/inbound-numbers.ts";
import {
  KEYWORD_KINDS,
  KEYWORD_PATTERN,
  type KeywordKind,
  keywordSettings,
  normaliseKeyword,
  OverlappingKeywordsError,
  ReplyTooLongError,
  setKeywordSettings,
} from "../inbound/keywords.ts";
import { searchInbound } from "../inbound/search-inbound.ts";
import { SIMULATOR_NOT_INSTALLED, simulatorInstalled } from "../simulator-loader.ts";
import {
  ACCOUNT_OPTION,
  accountIdOf,
  CommandError,
  type DataCommand,
  type OptionSpec,
  type ParsedArgs,
  type ProcessCommand,
  requireOption,
  stringOption,
  UsageError,
} from "./args.ts";

/**
 * Two-way messaging, for the operator: the inbound numbers an account owns, its keyword lists and
 * replies, the inbound messages no account owns, and `simulate-mo`, which has a running carrier
 * simulator send a mobile-originated message (a rehearsal without a handset).
 */
const ACCOUNT = ACCOUNT_OPTION;
const NUMBER = [{ name: "NUMBER", help: "a short code or a number (+263…, 263… or 0… are one number)" }];

function numberOf(args: ParsedArgs): string {
  const written = args.positionals[0] ?? "";
  const number = inboundNumberOf(written);
  if (!number)
    throw new UsageError(`an inbound number is a short code or a number of 3 to 20 digits, got "${written}"`);
  return number;
}

async function existingAccount(pool: Pool, id: string): Promise<void> {
  if (!(await findAccount(pool, id))) throw new CommandError(`no account ${id}`);
}

const KIND_OPTION: Record<KeywordKind, string> = { opt_out: "opt-out", opt_in: "opt-in", help: "help" };

function wordsOf(args: ParsedArgs, kind: KeywordKind): string[] | undefined {
  const name = `${KIND_OPTION[kind]}-words`;
  const value = stringOption(args, name);
  if (value === undefined) return undefined;
  const words = value.split(",").map(normaliseKeyword);
  if (words.length === 0 || words.some((w) => !KEYWORD_PATTERN.test(w)))
    throw new UsageError(
      `--${name} is a comma-separated list of words of letters and digits, got "${value}"`,
    );
  return words;
}

const MAX_LIMIT = 1_000;

export const INBOUND_COMMANDS: readonly DataCommand[] = [
  {
    kind: "data",
    name: "inbound-number add",
    summary: "give an account an inbound number (short code or long number): its messages go there",
    details: [
      "A number has one owner: one another account has fails (exit 1). The account may also send from",
      "it (as `from`, written as listed). Prints the number as stored (international form) and added.",
    ].join("\n"),
    options: ACCOUNT,
    positionals: NUMBER,
    run: (args) => {
      const accountId = accountIdOf(args);
      const number = numberOf(args);
      return async (pool) => {
        await existingAccount(pool, accountId);
        try {
          return { account_id: accountId, ...(await addInboundNumber(pool, accountId, number)) };
        } catch (err) {
          if (err instanceof InboundNumberTakenError) throw new CommandError(err.message);
          throw err;
        }
      };
    },
  },
  {
    kind: "data",
    name: "inbound-number list",
    summary: "list an account's inbound numbers",
    options: ACCOUNT,
    run: (args) => {
      const accountId = accountIdOf(args);
      return async (pool) => {
        await existingAccount(pool, accountId);
        return listInboundNumbers(pool, accountId);
      };
    },
  },
  {
    kind: "data",
    name: "inbound-number remove",
    summary: "take an inbound number from an account: its messages are unrouted from then on",
    details: "Exit 1 when the account does not have the number.",
    options: ACCOUNT,
    positionals: NUMBER,
    run: (args) => {
      const accountId = accountIdOf(args);
      const number = numberOf(args);
      return async (pool) => {
        await existingAccount(pool, accountId);
        if (!(await removeInboundNumber(pool, accountId, number)))
          throw new CommandError(`account ${accountId} has no inbound number ${number}`);
        return { account_id: accountId, number, removed: true };
      };
    },
  },
  {
    kind: "data",
    name: "inbound list",
    summary: "list inbound messages, newest first: those no account owns (--unrouted), or an account's",
    details: [
      "An unrouted message was sent to an address no account owns (add it with `shiri inbound-number add`);",
      'each is kept, counted (shiri_inbound_messages_total{routing="unrouted"}) and listed here.',
    ].join("\n"),
    options: {
      unrouted: { type: "boolean", help: "the messages no account owns" },
      account: { type: "string", value: "ID", help: "an account's messages instead" },
      limit: { type: "string", value: "N", help: `at most N messages (default 50, at most ${MAX_LIMIT})` },
    },
    columns: ["received_at", "link", "from", "to", "parts", "complete", "encoding", "message"],
    run: (args) => {
      const unrouted = args.values.unrouted === true;
      const account = stringOption(args, "account");
      if (unrouted === (account !== undefined)) throw new UsageError("give either --unrouted or --account");
      const accountId = account === undefined ? null : accountIdOf(args);
      const limitText = stringOption(args, "limit") ?? "50";
      const limit = /^\d{1,4}$/.test(limitText) ? Number(limitText) : Number.NaN;
      if (!(limit >= 1 && limit <= MAX_LIMIT))
        throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}, got "${limitText}"`);
      return async (pool) => {
        if (accountId) await existingAccount(pool, accountId);
        return (await searchInbound(pool, accountId, {}, { limit, after: null })).messages;
      };
    },
  },
  {
    kind: "data",
    name: "keywords show",
    summary: "show an account's keyword lists and replies (opt-out, opt-in, help)",
    options: ACCOUNT,
    run: (args) => {
      const accountId = accountIdOf(args);
      return async (pool) => {
        await existingAccount(pool, accountId);
        return { account_id: accountId, ...(await keywordSettings(pool, accountId)) };
      };
    },
  },
  {
    kind: "data",
    name: "keywords set",
    summary: "change an account's keyword lists or replies; what is not given stays as it is",
    details: [
      "A list replaces that kind's words (comma-separated, any case: STOP,QUIT). A reply is sent, from",
      "the number written to and billed as a send, to each message of its kind; an empty reply removes",
      "it (none is sent). A word in two lists, or a reply that needs more segments in its encoding than",
      "MAX_SEGMENTS allows a send (10), fails (exit 1).",
    ].join("\n"),
    options: {
      ...ACCOUNT,
      ...Object.fromEntries(
        KEYWORD_KINDS.flatMap((kind) => [
          [
            `${KIND_OPTION[kind]}-words`,
            { type: "string", value: "LIST", help: `the ${KIND_OPTION[kind]} keywords` } satisfies OptionSpec,
          ],
          [
            `${KIND_OPTION[kind]}-reply`,
            {
              type: "string",
              value: "TEXT",
              help: `the reply to an ${KIND_OPTION[kind]} keyword`,
            } satisfies OptionSpec,
          ],
        ]),
      ),
    },
    run: (args) => {
      const accountId = accountIdOf(args);
      const lists: Partial<Record<KeywordKind, string[]>> = {};
      const replies: Partial<Record<KeywordKind, string | null>> = {};
      for (const kind of KEYWORD_KINDS) {
        const words = wordsOf(args, kind);
        if (words) lists[kind] = words;
        const reply = args.values[`${KIND_OPTION[kind]}-reply`];
        if (typeof reply === "string") {
          if (reply.length > 1_600)
            throw new UsageError(`--${KIND_OPTION[kind]}-reply is over 1600 characters`);
          replies[kind] = reply === "" ? null : reply;
        }
      }
      const { MAX_SEGMENTS: maxSegments } = loadConfig();
      return async (pool) => {
        await existingAccount(pool, accountId);
        try {
          return {
            account_id: accountId,
            ...(await setKeywordSettings(pool, accountId, { lists, replies }, { maxSegments })),
          };
        } catch (err) {
          if (err instanceof OverlappingKeywordsError || err instanceof ReplyTooLongError)
            throw new CommandError(err.message);
          throw err;
        }
      };
    },
  },
];

/** `shiri simulate-mo`: a running simulator (`shiri simulator`, or the embedded default) sends an MO. */
export const SIMULATE_MO: ProcessCommand = {
  kind: "process",
  name: "simulate-mo",
  summary: "have a running carrier simulator send a mobile-originated message to the links bound to it",
  details: [
    "Through the simulators' control port (SIM_CONTROL_PORT, 2780 by default, on 127.0.0.1). Prints",
    "each deliver_sm's answer (command_status 0: stored and acknowledged). Exit 1 when it cannot.",
  ].join("\n"),
  options: {
    operator: {
      type: "string",
      value: "OP",
      help: "whose simulator sends it",
      required: true,
      choices: OPERATORS,
    },
    from: { type: "string", value: "NUMBER", help: "the handset's number (source_addr)", required: true },
    to: { type: "string", value: "ADDRESS", help: "the short code or number written to", required: true },
    text: { type: "string", value: "TEXT", help: "what the handset sends", required: true },
    encoding: { type: "string", value: "ENC", help: "gsm7, ascii, latin1 or ucs2", choices: MO_ENCODINGS },
    concatenation: {
      type: "string",
      value: "HOW",
      help: "udh8 (default), udh16 or sar, for a text of several parts",
      choices: MO_CONCATENATIONS,
    },
    "part-octets": { type: "string", value: "N", help: "octets of text per part (default 134)" },
    order: { type: "string", value: "LIST", help: "part numbers in the order sent, e.g. 2,1" },
    "across-binds": { type: "boolean", help: "spread the parts across the bound sessions" },
    copies: { type: "string", value: "N", help: "send each part N times (the SMSC repeating it)" },
    "control-port": {
      type: "string",
      value: "PORT",
      help: "the control port (default SIM_CONTROL_PORT or 2780)",
    },
  },
  run: async (args) => {
    if (!simulatorInstalled()) throw new CommandError(SIMULATOR_NOT_INSTALLED);
    const whole = (name: string, value: string | undefined) => {
      if (value === undefined) return undefined;
      if (!/^\d{1,5}$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${value}"`);
      return Number(value);
    };
    const order = stringOption(args, "order");
    const request = {
      operator: requireOption(args, "operator"),
      from: requireOption(args, "from"),
      to: requireOption(args, "to"),
      text: stringOption(args, "text") ?? "",
      encoding: stringOption(args, "encoding"),
      concatenation: stringOption(args, "concatenation"),
      partOctets: whole("part-octets", stringOption(args, "part-octets")),
      order: order?.split(",").map((p) => whole("order", p.trim()) as number),
      acrossBinds: args.values["across-binds"] === true ? true : undefined,
      copies: whole("copies", stringOption(args, "copies")),
    };
    const port =
      whole("control-port", stringOption(args, "control-port") ?? process.env.SIM_CONTROL_PORT) ?? 2780;
    const res = await fetch(`http://127.0.0.1:${port}/mobile-originated`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request),
    }).catch((err: unknown) => {
      throw new CommandError(`no simulator control port answers on 127.0.0.1:${port} (${String(err)})`);
    });
    const text = await res.text();
    if (!res.ok) throw new CommandError(`the simulator refused: ${text}`);
    process.stdout.write(`${text}\n`);
  },
};
