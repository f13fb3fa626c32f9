/**
 * The simulator as src/ loads it at run time (src/simulator-loader.ts): never imported by src/
 * by name, so the production build holds none of carriers/simulator (docs/decisions/0010).
 */
import type { SimulatorEntry } from "../../src/simulator-loader.ts";
import { OPERATORS } from "../types.ts";
import { startSimulators } from "./index.ts";
import { overridesFromEnv, runSimulators, simulatorSettings } from "./main.ts";

export const simulator: SimulatorEntry = {
  startEmbedded: ({ portOf, logger }) =>
    startSimulators({
      perOperator: Object.fromEntries(
        OPERATORS.map((op) => [op, { ...overridesFromEnv(op, process.env), port: portOf(op) }]),
      ),
      logger: logger.child({ component: "simulator" }),
      // `shiri simulate-mo` reaches the embedded simulators here.
      control: { host: "127.0.0.1", port: simulatorSettings(process.env).controlPort },
    }),
  runAlone: () => runSimulators(),
};
