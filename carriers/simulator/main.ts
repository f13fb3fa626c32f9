/**
 * `shiri simulator` (or `tsx carriers/simulator/main.ts`): one simulated SMSC per operator on the
 * adapters' ports until SIGINT/SIGTERM. Environment, per operator (ECONET, NETONE, TELECEL):
 *   SIM_<OP>_PORT, SIM_<OP>_SUBMIT_LATENCY_MS, SIM_<OP>_RECEIPT_DELAY_MS, SIM_<OP>_TPS_LIMIT,
 *   SIM_<OP>_REJECT_RATE, SIM_<OP>_DROP_RATE, SIM_<OP>_DROP_AFTER_SUBMITS (drop each connection
 *   after that many submits), SIM_<OP>_DUPLICATE_RECEIPT_RATE,
 *   SIM_<OP>_OUTCOMES (e.g. "DELIVRD=90,UNDELIV=10"), SIM_<OP>_PRESET (a dialect from presets.ts,
 *   e.g. "hex-decimal"; Shiri matches every preset's ids on its defaults, and the few presets that
 *   need another setting, such as SAR concatenation, have their SMPP_<OP>_* variables logged);
 *   SIM_HOST (listen address), SIM_CONTROL_PORT (the control port, 2780 by default: `shiri
 *   simulate-mo` sends mobile-originated messages through it), LOG_LEVEL. A variable set to the empty string counts as unset
 *   (src/environment.ts), as it does for the service.
 */
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { presentEnv } from "../../src/environment.ts";
import { OPERATORS, type Operator } from "../types.ts";
import { DEFAULT_CONTROL_PORT } from "./control.ts";
import { type OperatorSimulatorOverrides, startSimulators } from "./index.ts";
import { isPresetName, PRESET_NAMES, PRESETS, shiriEnvFor } from "./presets.ts";
import { RECEIPT_STATS, type ReceiptStat } from "./receipt.ts";
import type { SimulatorBehaviour } from "./simulator.ts";

type NumericBehaviour = {
  [K in keyof SimulatorBehaviour]: SimulatorBehaviour[K] extends number ? K : never;
}[keyof SimulatorBehaviour];

/** Environment suffix → numeric behaviour field. */
const NUMERIC_ENV: Readonly<Record<string, NumericBehaviour>> = {
  SUBMIT_LATENCY_MS: "submitLatencyMs",
  RECEIPT_DELAY_MS: "receiptDelayMs",
  TPS_LIMIT: "tpsLimit",
  REJECT_RATE: "rejectRate",
  DROP_RATE: "dropRate",
  DUPLICATE_RECEIPT_RATE: "duplicateReceiptRate",
};

function parseNumber(name: string, raw: string): number {
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value < 0) {
    throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  }
  return value;
}

/** "DELIVRD=90,UNDELIV=10" → weights. */
export function parseOutcomes(name: string, raw: string): Partial<Record<ReceiptStat, number>> {
  const out: Partial<Record<ReceiptStat, number>> = {};
  for (const pair of raw.split(",").filter((p) => p.trim() !== "")) {
    const [stat = "", weight = ""] = pair.split("=").map((s) => s.trim());
    const known = RECEIPT_STATS.find((s) => s === stat.toUpperCase());
    if (!known)
      throw new Error(`${name}: unknown receipt state "${stat}" (expected ${RECEIPT_STATS.join(", ")})`);
    out[known] = parseNumber(`${name} ${known}`, weight);
  }
  return out;
}

export function overridesFromEnv(operator: Operator, given: NodeJS.ProcessEnv): OperatorSimulatorOverrides {
  const env = presentEnv(given);
  const prefix = `SIM_${operator.toUpperCase()}_`;
  const behaviour: Partial<SimulatorBehaviour> = {};
  for (const [suffix, field] of Object.entries(NUMERIC_ENV)) {
    const raw = env[prefix + suffix];
    if (raw !== undefined) behaviour[field] = parseNumber(prefix + suffix, raw);
  }
  const dropAfter = env[`${prefix}DROP_AFTER_SUBMITS`];
  if (dropAfter !== undefined)
    behaviour.dropAfterSubmits = parseNumber(`${prefix}DROP_AFTER_SUBMITS`, dropAfter);
  const outcomes = env[`${prefix}OUTCOMES`];
  if (outcomes !== undefined) behaviour.outcomes = parseOutcomes(`${prefix}OUTCOMES`, outcomes);
  const port = env[`${prefix}PORT`];
  const password = env[`${prefix}PASSWORD`];
  const preset = env[`${prefix}PRESET`];
  if (preset !== undefined && !isPresetName(preset))
    throw new Error(`${prefix}PRESET: unknown preset "${preset}" (expected ${PRESET_NAMES.join(", ")})`);
  return {
    behaviour,
    ...(port !== undefined ? { port: parseNumber(`${prefix}PORT`, port) } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(preset !== undefined ? { preset } : {}),
  };
}

/** What `shiri simulator` runs with: its log level, listen address, control port and each operator's overrides. */
export function simulatorSettings(given: NodeJS.ProcessEnv): {
  logLevel: string;
  host: string | undefined;
  controlPort: number;
  perOperator: Record<Operator, OperatorSimulatorOverrides>;
} {
  const env = presentEnv(given);
  const perOperator = Object.fromEntries(OPERATORS.map((op) => [op, overridesFromEnv(op, env)])) as Record<
    Operator,
    OperatorSimulatorOverrides
  >;
  const controlPort =
    env.SIM_CONTROL_PORT === undefined
      ? DEFAULT_CONTROL_PORT
      : parseNumber("SIM_CONTROL_PORT", env.SIM_CONTROL_PORT);
  return { logLevel: env.LOG_LEVEL ?? "info", host: env.SIM_HOST, controlPort, perOperator };
}

/** Runs until SIGINT or SIGTERM, then stops every simulator. */
export async function runSimulators(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { logLevel, host, controlPort, perOperator } = simulatorSettings(env);
  const logger = pino({ name: "shiri-simulator", level: logLevel });
  const running = await startSimulators({
    perOperator,
    logger,
    host,
    control: { host: "127.0.0.1", port: controlPort },
  });
  logger.info({ ports: running.ports, controlPort: running.controlPort }, "carrier simulators running");
  for (const op of OPERATORS) {
    const preset = perOperator[op]?.preset;
    if (preset)
      logger.info(
        { operator: op, preset, description: PRESETS[preset].description, shiriEnv: shiriEnvFor(op, preset) },
        "simulator preset",
      );
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  logger.info({ signal }, "stopping carrier simulators");
  await running.stop();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runSimulators().catch((error: unknown) => {
    process.stderr.write(`simulator: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
