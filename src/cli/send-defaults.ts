import { findAccount } from "../accounts/accounts.ts";
import { getSendDefaults, type SendDefaults, setSendDefaults } from "../accounts/send-defaults.ts";
import { canonicalTimeZone, type DeliveryWindow, TIME_OF_DAY } from "../domain/delivery-window.ts";
import {
  ACCOUNT_OPTION,
  accountIdOf,
  CommandError,
  type DataCommand,
  type ParsedArgs,
  stringOption,
  UsageError,
} from "./args.ts";

/**
 * `shiri account send-defaults`: an account's defaults for its sends (issue 30), which every send
 * that does not say otherwise takes: smart encoding, and a delivery window.
 */
const WINDOW = /^(\d{2}:\d{2})-(\d{2}:\d{2})$/;

/** The defaults as printed: the API's field names. */
export function sendDefaultsReport(accountId: string, defaults: SendDefaults) {
  return {
    account_id: accountId,
    smart_encoding: defaults.smartEncoding,
    deliver_between: defaults.deliverBetween,
  };
}

/** The window the options name: undefined when they name none, null for `--deliver-between off`. */
function windowOf(args: ParsedArgs): DeliveryWindow | null | undefined {
  const between = stringOption(args, "deliver-between");
  const zone = stringOption(args, "time-zone");
  if (between === undefined) {
    if (zone !== undefined) throw new UsageError("--time-zone goes with --deliver-between");
    return undefined;
  }
  if (between === "off") {
    if (zone !== undefined) throw new UsageError("--deliver-between off takes no --time-zone");
    return null;
  }
  const match = WINDOW.exec(between);
  const [start, end] = [match?.[1] ?? "", match?.[2] ?? ""];
  if (!match || !TIME_OF_DAY.test(start) || !TIME_OF_DAY.test(end))
    throw new UsageError(`--deliver-between must be HH:MM-HH:MM (or off), got "${between}"`);
  if (start === end) throw new UsageError("--deliver-between must end at another time than it starts");
  if (zone === undefined) throw new UsageError("--deliver-between needs --time-zone (an IANA name)");
  const timeZone = canonicalTimeZone(zone);
  if (timeZone === null) throw new UsageError(`--time-zone must be an IANA time zone name, got "${zone}"`);
  return { start, end, time_zone: timeZone };
}

export const SEND_DEFAULT_COMMANDS: readonly DataCommand[] = [
  {
    kind: "data",
    name: "account send-defaults",
    summary: "show or set an account's defaults for its sends: smart encoding, a delivery window",
    details: [
      "Without --smart-encoding or --deliver-between it prints the defaults; with them, it changes what",
      "they name and prints the result. A send's own smart_encoding or deliver_between (null for none)",
      "overrides them. In force from the account's next request in every API process.",
    ].join("\n"),
    options: {
      ...ACCOUNT_OPTION,
      "smart-encoding": {
        type: "string",
        value: "on|off",
        help: "replace look-alike characters when that makes a text GSM-7",
        choices: ["on", "off"],
      },
      "deliver-between": {
        type: "string",
        value: "HH:MM-HH:MM|off",
        help: "the local hours sends may go out in (an end before the start spans midnight); off for none",
      },
      "time-zone": { type: "string", value: "ZONE", help: "the window's IANA time zone, e.g. Africa/Harare" },
    },
    run: (args) => {
      const id = accountIdOf(args);
      const smart = stringOption(args, "smart-encoding");
      const window = windowOf(args);
      return async (pool) => {
        if (!(await findAccount(pool, id))) throw new CommandError(`no account ${id}`);
        if (smart === undefined && window === undefined)
          return sendDefaultsReport(id, await getSendDefaults(pool, id));
        const saved = await setSendDefaults(pool, id, {
          ...(smart === undefined ? {} : { smartEncoding: smart === "on" }),
          ...(window === undefined ? {} : { deliverBetween: window }),
        });
        return sendDefaultsReport(id, saved);
      };
    },
  },
];
