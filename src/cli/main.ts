import { readFileSync } from "node:fs";
import { constants } from "node:os";
import path from "node:path";
import { z } from "zod";
import { CHECKOUT_DIR } from "../checkout.ts";
import { ConfigError, loadConfig } from "../config.ts";
import { namingTheDatabase, openDatabase } from "../db/database.ts";
import { migrate, migrationOptions } from "../db/migrate.ts";
import { createPool, databaseTimeouts, unboundedReads } from "../db/pool.ts";
import { createLogger } from "../logger.ts";
import {
  asksForHelp,
  type Command,
  type DataCommand,
  formatOf,
  Interrupted,
  type ParsedArgs,
  parseCommandArgs,
  UsageError,
} from "./args.ts";
import { COMMANDS } from "./commands.ts";
import { commandHelp, commandsIn, groupHelp, overallHelp } from "./help.ts";
import { render } from "./output.ts";

/**
 * `shiri`: finds the command in the table, answers --help and --version, parses the rest against
 * the command's entry and runs it. Exit status 0 done, 1 failed, 2 bad usage.
 */

const HELP_WORDS = new Set(["help", "--help", "-h"]);

function version(): string {
  const manifest = readFileSync(path.join(CHECKOUT_DIR, "package.json"), "utf8");
  return z.object({ version: z.string() }).parse(JSON.parse(manifest)).version;
}

/** The command the words name and the words after its name; a usage error when there is none. */
function resolve(argv: readonly string[]): { command: Command; rest: string[] } {
  const [first = "", second] = argv;
  const two = COMMANDS.find((c) => c.name === `${first} ${second ?? ""}`);
  if (two) return { command: two, rest: argv.slice(2) };
  const one = COMMANDS.find((c) => c.name === first);
  if (one) return { command: one, rest: argv.slice(1) };
  if (commandsIn(COMMANDS, first).length > 0) {
    const usage = groupHelp(COMMANDS, first);
    if (second === undefined || second.startsWith("-")) {
      throw new UsageError(`"${first}" needs a command after it`, usage);
    }
    throw new UsageError(`unknown command "${first} ${second}"`, usage);
  }
  throw new UsageError(`unknown command "${first}"`, overallHelp(COMMANDS));
}

/** `shiri help [command words]`, `shiri --help`, `shiri <group> --help`: the help asked for. */
function helpFor(words: readonly string[]): string {
  if (words.length === 0) return overallHelp(COMMANDS);
  if (words.length === 1 && commandsIn(COMMANDS, words[0] ?? "").length > 0) {
    return groupHelp(COMMANDS, words[0] ?? "");
  }
  return commandHelp(resolve(words).command);
}

/** Runs a data command against the service's database (the embedded one when DATABASE_URL is unset). */
async function runData(command: DataCommand, args: ParsedArgs): Promise<void> {
  const action = command.run(args);
  const config = loadConfig();
  const database = await openDatabase(config);
  // Unbounded reads: a command may migrate, vacuum or audit, and Ctrl-C ends one that hangs.
  const pool = createPool(database.url, 2, unboundedReads(databaseTimeouts(config)));
  try {
    // Every command but migrate itself works on a fresh checkout: it migrates first.
    if (!command.migrates)
      await migrate(pool, migrationOptions(config, createLogger(config.LOG_LEVEL, { stderr: true })));
    const result = await action(pool);
    process.stdout.write(render(result, formatOf(args), command.columns));
  } catch (err) {
    throw namingTheDatabase(err, database);
  } finally {
    await pool.end();
    await database.stop();
  }
}

async function main(argv: string[]): Promise<void> {
  const [first] = argv;
  // No command is bad usage, as `shiri account` is: a script that forgot its command fails.
  if (first === undefined) throw new UsageError("a command is needed", overallHelp(COMMANDS));
  if (HELP_WORDS.has(first)) {
    const words = first === "help" ? argv.slice(1) : [];
    process.stdout.write(`${helpFor(words)}\n`);
    return;
  }
  if (first === "--version" || first === "-v") {
    process.stdout.write(`shiri ${version()}\n`);
    return;
  }
  if (asksForHelp(argv)) {
    // `shiri account --help`, `shiri account show --help`: the words before the flag name it.
    const words = argv.slice(0, 2).filter((w) => !w.startsWith("-"));
    process.stdout.write(`${helpFor(words)}\n`);
    return;
  }
  const { command, rest } = resolve(argv);
  try {
    const args = parseCommandArgs(command, rest);
    if (command.kind === "process") await command.run(args);
    else if (command.kind === "local") process.stdout.write(render(command.run(args), formatOf(args)));
    else await runData(command, args);
  } catch (err) {
    // A usage error names this command: its usage follows the message.
    if (err instanceof UsageError) err.usage ??= commandHelp(command);
    throw err;
  }
}

/** One line: a failure's message never spreads over the terminal. */
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`shiri: ${oneLine(err.message)}\n${err.usage ? `\n${err.usage}\n` : ""}`);
    process.exit(2);
  }
  // The environment, not the command line, is wrong: the usage would not help.
  if (err instanceof ConfigError) {
    process.stderr.write(`shiri: ${oneLine(err.message)}\n`);
    process.exit(2);
  }
  if (err instanceof Interrupted) {
    process.stderr.write(`shiri: ${oneLine(err.message)}\n`);
    process.exit(128 + constants.signals[err.signal]);
  }
  // A CommandError, or anything else that went wrong (the database unreachable...): exit 1.
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`shiri: ${oneLine(message)}\n`);
  process.exit(1);
});
