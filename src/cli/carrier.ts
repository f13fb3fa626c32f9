import { constants, hostname } from "node:os";
import { SENDER_ID_PATTERN } from "../accounts/sender-ids.ts";
import { loadConfig } from "../config.ts";
import { BindLeases, BindSlot } from "../dispatch/bind-slot.ts";
import { checkCarrier } from "../dispatch/carrier-check.ts";
import { toWireMsisdn } from "../domain/numbers.ts";
import { createLogger } from "../logger.ts";
import { linkIdReports } from "../receipts/id-tally.ts";
import {
  CommandError,
  type DataCommand,
  Interrupted,
  type ParsedArgs,
  stringOption,
  UsageError,
} from "./args.ts";

/** How long `carrier check` waits for the bind and, with --to, for the receipt. */
const BIND_WAIT_MS = 10_000;
const RECEIPT_WAIT_SECONDS = 60;
/** The signals that stop a check in order: Ctrl-C, `kill`, a closed terminal. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
/**
 * A repeat of a stop signal sooner than this is npm's or npx's echo of the same Ctrl-C (they pass
 * it on to the child the terminal already signalled) and is ignored; a later one is the operator
 * insisting, and ends the check at once.
 */
const ECHO_MS = 1_000;

function linkOf(name: string) {
  const config = loadConfig();
  const settings = config.links[name];
  if (!settings)
    throw new UsageError(`no link named "${name}" (SMPP_LINKS is ${Object.keys(config.links).join(",")})`);
  return { config, settings };
}

function secondsOf(args: ParsedArgs, name: string, fallback: number): number {
  const value = stringOption(args, name);
  if (value === undefined) return fallback;
  const n = /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n > 0)) throw new UsageError(`--${name} must be a whole number of seconds, got "${value}"`);
  return n;
}

/** Bringing up a carrier: rehearse a link, and see what its receipts were found to write. */
export const CARRIER_COMMANDS: readonly DataCommand[] = [
  {
    kind: "data",
    name: "carrier check",
    summary: "bind a link with its settings and report what the SMSC negotiated; --to sends one message",
    details: [
      "Binds the link (SMPP_<LINK>_* settings) with one of its bind slots, so it never takes a bind the",
      "workers hold, as a transmitter, and reports the SMSC's system_id and interface version, or why",
      "the bind failed (exit 1). With --to NUMBER it binds as a transceiver, submits one real message",
      "(billed to no account) and waits for its receipt: the ids in the answer and in the receipt (TLV",
      "and text), and whether Shiri matches them (exact, same_number, hex_to_decimal, decimal_to_hex,",
      "or no: set SMPP_<LINK>_ID_FORMAT_* then). Every other deliver_sm the SMSC hands it (handsets'",
      "messages, other messages' receipts) is answered ESME_RX_T_APPN, for the SMSC to deliver again",
      "to a worker's bind, and counted in others_refused. It holds the slot on the workers' renewed",
      "lease (BIND_LEASE_SECONDS); on SIGINT, SIGTERM or SIGHUP it unbinds, gives the slot back and",
      "exits 128+n.",
    ].join("\n"),
    positionals: [
      { name: "LINK", help: "the link's name, as in SMPP_LINKS (econet, netone, telecel by default)" },
    ],
    options: {
      to: { type: "string", value: "NUMBER", help: "send one message to this number (+263…)" },
      from: { type: "string", value: "SENDER", help: "its sender id (SHIRI)" },
      "wait-seconds": {
        type: "string",
        value: "N",
        help: `how long to wait for the receipt (${RECEIPT_WAIT_SECONDS})`,
      },
    },
    run: (args) => {
      const link = args.positionals[0] as string;
      const { config, settings } = linkOf(link);
      const to = stringOption(args, "to");
      // Refused before a bind slot is taken: a submit could never carry them.
      if (to !== undefined && toWireMsisdn(to) === null)
        throw new UsageError(`--to must be a number that routes to an operator (+263…), got "${to}"`);
      const from = stringOption(args, "from") ?? "SHIRI";
      if (!SENDER_ID_PATTERN.test(from) && !/^\+?\d{3,15}$/.test(from))
        throw new UsageError(
          `--from must be a sender id (3 to 11 letters or digits) or a number, got "${from}"`,
        );
      const receiptTimeoutMs = secondsOf(args, "wait-seconds", RECEIPT_WAIT_SECONDS) * 1000;
      return async (pool) => {
        const owner = `carrier-check:${hostname()}:${process.pid}`;
        // The workers' lease, renewed while the check runs: a check killed outright (SIGKILL, its
        // container gone) frees the link's slot for a worker within one lease.
        const leaseSeconds = config.BIND_LEASE_SECONDS;
        const slot = new BindSlot(pool, link, settings.max_binds, owner, leaseSeconds);
        if ((await slot.acquire()) === null)
          throw new CommandError(
            `every bind slot of ${link} is held by a worker (SMPP_${link.toUpperCase()}_MAX_BINDS=${settings.max_binds}): stop one, or allow one more bind`,
          );
        const ending = new AbortController();
        const leases = new BindLeases(pool, owner, leaseSeconds);
        // Never said bound: a standby worker that read so would think the link served elsewhere.
        const stopKeeping = leases.keep(
          slot,
          () => false,
          () =>
            ending.abort(
              new CommandError(
                `${link}'s bind slot was lost (its ${leaseSeconds} s lease could not be renewed): the check stopped its bind`,
              ),
            ),
        );
        let signalledAt = 0;
        const stopOn = (signal: NodeJS.Signals) => {
          if (ending.signal.aborted) {
            // Already stopping (its lease lost, say): only a repeat past the echo ends it at once.
            if (signalledAt === 0) signalledAt = Date.now();
            if (Date.now() - signalledAt < ECHO_MS) return;
            process.stderr.write(
              `shiri: carrier check interrupted again (${signal}): ${link}'s bind slot is free within its ${leaseSeconds} s lease\n`,
            );
            process.exit(128 + constants.signals[signal]);
          }
          signalledAt = Date.now();
          // The check unbinds, then the slot is given back below (a slot freed first could let a
          // worker bind while the check's bind still counts at the SMSC).
          ending.abort(
            new Interrupted(signal, `carrier check interrupted (${signal}): ${link}'s bind slot given back`),
          );
        };
        for (const signal of STOP_SIGNALS) process.on(signal, stopOn);
        try {
          const report = await checkCarrier({
            link,
            settings,
            // On stderr: stdout carries the report alone, one JSON object.
            logger: createLogger(config.LOG_LEVEL === "info" ? "warn" : config.LOG_LEVEL, { stderr: true }),
            ...(to !== undefined ? { to } : {}),
            from,
            bindTimeoutMs: BIND_WAIT_MS,
            receiptTimeoutMs,
            signal: ending.signal,
          });
          if (ending.signal.aborted) throw ending.signal.reason;
          // The report is on stdout; the failure is said in one line, as every failure is.
          const failure = !report.bound
            ? `${link} did not bind: ${report.bind_error}`
            : report.message?.matched === "no"
              ? `${link}'s receipt id does not name its answer's: set SMPP_${link.toUpperCase()}_ID_FORMAT_*`
              : null;
          if (failure !== null) {
            process.stderr.write(`shiri: ${failure}\n`);
            process.exitCode = 1;
          }
          return report;
        } finally {
          stopKeeping();
          await leases.stop();
          await slot.release();
          for (const signal of STOP_SIGNALS) process.off(signal, stopOn);
        }
      };
    },
  },
  {
    kind: "data",
    name: "carrier ids",
    summary: "how each link's receipts were found to name their segments, over every worker",
    details: [
      "Per link: the receipts matched by exact id, by the same number in another case or padding",
      "(same_number), or in another base (hex_to_decimal: answered in hex, receipted in decimal;",
      "decimal_to_hex), and what the carrier was learnt to use (the relation of most matches).",
    ].join("\n"),
    options: { link: { type: "string", value: "LINK", help: "this link only" } },
    columns: ["link", "learnt", "last_match_at"],
    run: (args) => {
      const only = stringOption(args, "link");
      const links = only !== undefined ? [only] : Object.keys(loadConfig().links);
      if (only !== undefined) linkOf(only);
      return (pool) => linkIdReports(pool, links);
    },
  },
];
