import { type Command, type OptionSpec, optionsOf } from "./args.ts";

/** The help texts, all written from the command table. */

const DATABASE_NOTE =
  "The database is DATABASE_URL when set, else this checkout's embedded Postgres (in DATA_DIR).";

function optionWords(name: string, spec: OptionSpec): string {
  return spec.type === "string" ? `--${name} ${spec.value ?? "VALUE"}` : `--${name}`;
}

/** Two aligned columns, the second starting where the widest first one ends. */
function aligned(rows: ReadonlyArray<readonly [string, string]>, indent = "  "): string[] {
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `${indent}${left.padEnd(width)}  ${right}`.trimEnd());
}

export function synopsis(command: Command): string {
  const options = Object.entries(optionsOf(command));
  return [
    `shiri ${command.name}`,
    ...options.filter(([, spec]) => spec.required).map(([name, spec]) => optionWords(name, spec)),
    ...(command.positionals ?? []).map((p) => p.name),
    ...options.filter(([, spec]) => !spec.required).map(([name, spec]) => `[${optionWords(name, spec)}]`),
  ].join(" ");
}

/** `shiri <command> --help`: that command's usage, what it does, and each argument and option. */
export function commandHelp(command: Command): string {
  const lines = [`usage: ${synopsis(command)}`, "", command.summary];
  if (command.details) lines.push("", command.details);
  const positionals = command.positionals ?? [];
  if (positionals.length > 0)
    lines.push("", "arguments:", ...aligned(positionals.map((p) => [p.name, p.help])));
  const rows: Array<[string, string]> = Object.entries(optionsOf(command)).map(([name, spec]) => [
    optionWords(name, spec),
    spec.required ? `${spec.help} (required)` : spec.help,
  ]);
  rows.push(["-h, --help", "show this help"]);
  lines.push("", "options:", ...aligned(rows));
  if (command.kind === "data") lines.push("", DATABASE_NOTE);
  return lines.join("\n");
}

/** The commands whose first word is `group` (`account` → create, list, show). */
export function commandsIn(commands: readonly Command[], group: string): Command[] {
  return commands.filter((c) => c.name.startsWith(`${group} `));
}

/** `shiri account --help`: the group's commands, one a line. */
export function groupHelp(commands: readonly Command[], group: string): string {
  const members = commandsIn(commands, group);
  return [
    `usage: shiri ${group} <${members.map((c) => c.name.slice(group.length + 1)).join("|")}> [options]`,
    "",
    ...aligned(members.map((c) => [c.name, c.summary])),
    "",
    `Run \`shiri ${group} <command> --help\` for a command's options.`,
  ].join("\n");
}

/** `shiri --help`: every command with its one line. */
export function overallHelp(commands: readonly Command[]): string {
  return [
    "usage: shiri <command> [options]",
    "       shiri <command> --help    that command's options",
    "       shiri --version",
    "",
    "commands:",
    ...aligned(commands.map((c) => [c.name, c.summary])),
    "",
    "Commands that read or change data print JSON (one object or array); --format table prints columns.",
    "Exit status: 0 done, 1 failed (one line on stderr), 2 bad usage (with the command's usage).",
    DATABASE_NOTE,
  ].join("\n");
}
