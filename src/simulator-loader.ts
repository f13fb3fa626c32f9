import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Operator } from "../carriers/index.ts";
import type { Logger } from "./logger.ts";

/*
 * The carrier simulators are a development tool: they live in carriers/simulator, outside src/
 * and outside the production build (tsconfig.build.json), and src/ never imports them by name
 * (docs/decisions/0010). The development start (START_SIMULATORS) and `shiri simulator` load them
 * here, from where they are, at run time.
 */

/** What src/ uses of carriers/simulator: carriers/simulator/entry.ts implements it. */
export interface SimulatorEntry {
  /**
   * One simulator per operator in this process, each on the port `portOf` gives (where the
   * workers' SMPP settings point), with the control port `shiri simulate-mo` reaches.
   */
  startEmbedded(options: {
    portOf: (operator: Operator) => number;
    logger: Logger;
  }): Promise<{ stop(): Promise<void> }>;
  /** `shiri simulator`: the simulators alone, configured by SIM_*, until SIGINT or SIGTERM. */
  runAlone(): Promise<void>;
}

export const SIMULATOR_NOT_INSTALLED =
  "the carrier simulator is not part of a production install: run it from a development checkout (npm ci)";

/** Where carriers/simulator/entry.ts is from a module at `base` (src/ in development, dist/src/ built). */
function entryUrl(base: string): URL {
  return new URL("../carriers/simulator/entry.ts", base);
}

/** Whether the simulator's sources are beside this src/ (a development checkout). */
export function simulatorInstalled(base: string = import.meta.url): boolean {
  return existsSync(fileURLToPath(entryUrl(base)));
}

/** Loads the simulator, or says in one line that this install has none. */
export async function loadSimulator(base: string = import.meta.url): Promise<SimulatorEntry> {
  if (!simulatorInstalled(base)) throw new Error(SIMULATOR_NOT_INSTALLED);
  // A computed specifier: the compiler neither follows it nor emits what it names.
  const loaded: { simulator: SimulatorEntry } = await import(entryUrl(base).href);
  return loaded.simulator;
}
