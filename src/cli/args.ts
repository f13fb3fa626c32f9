import { parseArgs } from "node:util";
import type { Pool } from "../db/pool.ts";

/**
 * The shape of a command in the CLI's one table: its words, options and help text, and the
 * handler. The parser and `--help` both read it, so what is documented is what is accepted.
 */

/** Bad command-line words: the CLI prints the message and that command's usage, and exits 2. */
export class UsageError extends Error {
  /** The usage to print after the message; filled in by the dispatcher when the command is known. */
  usage: string | undefined;
  constructor(message: string, usage?: string) {
    super(message);
    this.usage = usage;
  }
}

/** The command was well formed but could not be done (no such account, a limit): one line, exit 1. */
export class CommandError extends Error {}

/** The command was told to stop by a signal and stopped in order: one line, exit 128 + its number. */
export class Interrupted extends Error {
  constructor(
    readonly signal: NodeJS.Signals,
    message: string,
  ) {
    super(message);
  }
}

export interface OptionSpec {
  type: "string" | "boolean";
  /** The placeholder in the usage line (`--account ID`); string options only. */
  value?: string;
  help: string;
  required?: boolean;
  /** The only values accepted, checked by the parser. */
  choices?: readonly string[];
}

export interface PositionalSpec {
  name: string;
  help: string;
}

export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

interface CommandBase {
  /** One or two words: `migrate`, `account show`. */
  name: string;
  /** One line, for the list of commands. */
  summary: string;
  /** More lines for `shiri <command> --help`: what it does and what it prints. */
  details?: string;
  options?: Record<string, OptionSpec>;
  /** Exactly these, in this order. */
  positionals?: readonly PositionalSpec[];
}

/** What a data command does with the database: the one JSON object or array it prints. */
export type DataAction = (pool: Pool) => Promise<object>;

/**
 * A command that works on the database and prints one JSON object or array (or a table with
 * `--format table`). Its run checks the words first (a UsageError) and returns the action, so
 * bad words never open, start or migrate a database. The database is migrated first unless
 * `migrates` (that is `shiri migrate`).
 */
export interface DataCommand extends CommandBase {
  kind: "data";
  migrates?: boolean;
  /** The columns `--format table` shows for a list, when not every field. */
  columns?: readonly string[];
  run: (args: ParsedArgs) => DataAction;
}

/** A command that runs on its own until stopped (the service, the simulators). */
export interface ProcessCommand extends CommandBase {
  kind: "process";
  run: (args: ParsedArgs) => Promise<void>;
}

/** A command that needs no database: it works its one JSON object out from its words alone. */
export interface LocalCommand extends CommandBase {
  kind: "local";
  run: (args: ParsedArgs) => object;
}

export type Command = DataCommand | ProcessCommand | LocalCommand;

export const FORMATS = ["json", "table"] as const;
export type Format = (typeof FORMATS)[number];

/** Options every data command takes besides its own. */
const DATA_OPTIONS: Record<string, OptionSpec> = {
  format: {
    type: "string",
    value: "json|table",
    help: "output: JSON (the default) or aligned columns",
    choices: FORMATS,
  },
};

/** Every option of the command, its own first: what the parser accepts and `--help` lists. */
export function optionsOf(command: Command): Record<string, OptionSpec> {
  return command.kind === "process" ? { ...command.options } : { ...command.options, ...DATA_OPTIONS };
}

/** True when the words ask for help (`--help` or `-h` anywhere before a `--`). */
export function asksForHelp(argv: readonly string[]): boolean {
  for (const word of argv) {
    if (word === "--") return false;
    if (word === "--help" || word === "-h") return true;
  }
  return false;
}

/** A word that is a negative number (-5, -1.5), not an option. */
const NEGATIVE_NUMBER = /^-[0-9.]/;

/**
 * `--amount -5` as `--amount=-5`: parseArgs takes "-5" for an option and answers in its own words
 * ("argument is ambiguous"); joined, the option's own check accepts or refuses the number.
 */
function joinNegatives(argv: readonly string[], specs: Record<string, OptionSpec>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? "";
    const next = argv[i + 1];
    if (word === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const spec = word.startsWith("--") ? specs[word.slice(2)] : undefined;
    if (spec?.type === "string" && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`${word}=${next}`);
      i++;
    } else out.push(word);
  }
  return out;
}

/** Parses the words after the command's name against its table entry. */
export function parseCommandArgs(command: Command, argv: string[]): ParsedArgs {
  const specs = optionsOf(command);
  const options = Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [name, { type: spec.type }]),
  );
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs({ args: joinNegatives(argv, specs), options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  for (const [name, spec] of Object.entries(specs)) {
    const value = parsed.values[name];
    if (typeof value === "string") parsed.values[name] = value.trim();
    const given = parsed.values[name];
    if (spec.required && (given === undefined || given === "")) throw new UsageError(`--${name} is required`);
    if (spec.choices && typeof given === "string" && !spec.choices.includes(given)) {
      throw new UsageError(`--${name} must be one of ${spec.choices.join(", ")}, got "${given}"`);
    }
  }
  const expected = command.positionals ?? [];
  const missing = expected[parsed.positionals.length];
  if (missing) throw new UsageError(`${missing.name} is required`);
  const extra = parsed.positionals[expected.length];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  return parsed;
}

/** A string option's value (trimmed), or undefined when not given. */
export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === "string" ? value : undefined;
}

/** A required string option's value; the parser has already refused it missing or blank. */
export function requireOption(args: ParsedArgs, name: string): string {
  const value = stringOption(args, name);
  if (value === undefined || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The --account option every account command takes. */
export const ACCOUNT_OPTION: Record<string, OptionSpec> = {
  account: { type: "string", value: "ID", help: "the account's id, a UUID", required: true },
};

/** A required option holding a UUID (`what` names it in the usage error), lower-cased. */
export function uuidOption(args: ParsedArgs, name: string, what: string): string {
  const id = requireOption(args, name);
  if (!UUID.test(id)) throw new UsageError(`--${name} must be ${what} (a UUID), got "${id}"`);
  return id.toLowerCase();
}

export const accountIdOf = (args: ParsedArgs): string => uuidOption(args, "account", "an account id");

export function formatOf(args: ParsedArgs): Format {
  return stringOption(args, "format") === "table" ? "table" : "json";
}
