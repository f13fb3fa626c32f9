import { parseArgs } from "node:util";

/** Bad command-line words: the CLI prints the message and the usage, and exits 2. */
export class UsageError extends Error {}

export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export function parseOptions(
  argv: string[],
  options: Record<string, { type: "string" | "boolean" }>,
  positionals: number,
): ParsedArgs {
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.positionals.length !== positionals) {
    throw new UsageError(`expected ${positionals} positional argument(s), got ${parsed.positionals.length}`);
  }
  return parsed;
}

export function requireOption(args: ParsedArgs, name: string): string {
  const value = args.values[name];
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${name} is required`);
  return value.trim();
}
