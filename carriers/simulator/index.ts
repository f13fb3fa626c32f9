/**
 * One simulated SMSC per operator, configured from the carrier adapters: the embedded default,
 * the tests and the bench all start them through here.
 */
import { CARRIERS } from "../index.ts";
import { OPERATORS, type Operator } from "../types.ts";
import { startControl } from "./control.ts";
import { PRESETS, type PresetName, type SimulatorPreset } from "./presets.ts";
import type { IdStyle } from "./receipt.ts";
import {
  CarrierSimulator,
  type SimLogger,
  type SimulatorBehaviour,
  type SimulatorOptions,
} from "./simulator.ts";

export { PRESET_NAMES, PRESETS, type PresetName, shiriEnvFor } from "./presets.ts";
export type { AcceptedSubmit, ReassembledMessage, SentReceipt, SimulatorBehaviour } from "./simulator.ts";
export { CarrierSimulator, DEFAULT_BEHAVIOUR } from "./simulator.ts";

/**
 * How the simulator writes each operator's ids when no preset is chosen. Assumed, not observed on
 * the operators' networks: three dialects Shiri must match with no id settings (hex answered and
 * decimal receipted; decimal throughout; upper-case hex answered, zero-padded in the receipt).
 */
const OPERATOR_IDS: Readonly<Record<Operator, { submit_sm_resp: IdStyle; receipt: IdStyle }>> = {
  econet: { submit_sm_resp: { format: "hex" }, receipt: { format: "decimal" } },
  netone: { submit_sm_resp: { format: "decimal" }, receipt: { format: "decimal" } },
  telecel: {
    submit_sm_resp: { format: "hex", upperCase: true },
    receipt: { format: "hex", upperCase: true, padTo: 16 },
  },
};

export interface OperatorSimulatorOverrides {
  /** 0 = an ephemeral port; default the adapter's port. */
  port?: number;
  behaviour?: Partial<SimulatorBehaviour>;
  seed?: number;
  /** A named dialect (carriers/simulator/presets.ts); default the operator's own. */
  preset?: PresetName;
  /** The password it accepts; default the adapter's (which production refuses to bind with). */
  password?: string;
}

/** A simulator that accepts exactly what the operator's adapter will bind and send with. */
export function simulatorOptionsFor(
  operator: Operator,
  overrides: OperatorSimulatorOverrides = {},
  extra: { host?: string; logger?: SimLogger } = {},
): SimulatorOptions {
  const adapter = CARRIERS[operator];
  const preset: SimulatorPreset = PRESETS[overrides.preset ?? "operator"];
  return {
    name: operator,
    host: extra.host ?? adapter.smpp.host,
    port: overrides.port ?? adapter.smpp.port,
    system_id: adapter.smpp.system_id,
    password: overrides.password ?? adapter.smpp.password,
    ids: preset.ids ?? OPERATOR_IDS[operator],
    receipts: preset.receipts,
    accepts: preset.accepts,
    behaviour: { ...preset.behaviour, ...overrides.behaviour },
    seed: overrides.seed,
    logger: extra.logger,
  };
}

export interface StartSimulatorsOptions {
  /** Default: every operator. */
  operators?: readonly Operator[];
  /** Listen address; default each adapter's host. */
  host?: string;
  perOperator?: Partial<Record<Operator, OperatorSimulatorOverrides>>;
  /** Each simulator names its operator in every log line. */
  logger?: SimLogger;
  /**
   * Where the control port listens (control.ts: mobile-originated messages on request); none
   * when not given. A port that cannot be had is logged, not fatal: the SMSCs still run.
   */
  control?: { host: string; port: number };
}

export interface RunningSimulators {
  simulators: Partial<Record<Operator, CarrierSimulator>>;
  /** The ports actually bound (ephemeral ones resolved). */
  ports: Partial<Record<Operator, number>>;
  /** The control port bound, if one was asked for and could be had. */
  controlPort: number | null;
  /** The simulator of a started operator; throws for one not started. */
  get(operator: Operator): CarrierSimulator;
  stop(): Promise<void>;
}

export async function startSimulators(options: StartSimulatorsOptions = {}): Promise<RunningSimulators> {
  const simulators: Partial<Record<Operator, CarrierSimulator>> = {};
  const ports: Partial<Record<Operator, number>> = {};
  let control: Awaited<ReturnType<typeof startControl>> | null = null;
  const stop = async () => {
    await control?.stop();
    await Promise.all(Object.values(simulators).map((s) => s.stop()));
  };
  try {
    for (const operator of options.operators ?? OPERATORS) {
      const sim = new CarrierSimulator(
        simulatorOptionsFor(operator, options.perOperator?.[operator], {
          host: options.host,
          logger: options.logger,
        }),
      );
      simulators[operator] = sim;
      ports[operator] = (await sim.start()).port;
    }
  } catch (error) {
    // One port taken must not leave the others listening.
    await stop();
    throw error;
  }
  if (options.control)
    control = await startControl(simulators, options.control).catch((err: unknown) => {
      options.logger?.warn(
        { err: String(err), port: options.control?.port },
        "simulator control port not started",
      );
      return null;
    });
  return {
    simulators,
    ports,
    controlPort: control?.port ?? null,
    stop,
    get(operator) {
      const sim = simulators[operator];
      if (!sim) throw new Error(`no simulator started for ${operator}`);
      return sim;
    },
  };
}
