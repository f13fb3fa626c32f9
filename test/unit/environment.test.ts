import { describe, expect, it } from "vitest";
import { OPERATORS } from "../../carriers/index.ts";
import { overridesFromEnv, simulatorSettings } from "../../carriers/simulator/main.ts";
import { loadConfig } from "../../src/config.ts";
import { presentEnv } from "../../src/environment.ts";

/** Every SIM_<OP>_<FIELD> variable the simulator reads. */
const SIM_FIELDS = [
  "PORT",
  "SUBMIT_LATENCY_MS",
  "RECEIPT_DELAY_MS",
  "TPS_LIMIT",
  "REJECT_RATE",
  "DROP_RATE",
  "DROP_AFTER_SUBMITS",
  "DUPLICATE_RECEIPT_RATE",
  "OUTCOMES",
  "PRESET",
];
const everySimVariable = OPERATORS.flatMap((op) => SIM_FIELDS.map((f) => `SIM_${op.toUpperCase()}_${f}`));
const allEmpty = (names: readonly string[]) => Object.fromEntries(names.map((n) => [n, ""]));

describe("the environment as every reader sees it", () => {
  it("drops variables set to the empty string and keeps the rest as given", () => {
    expect(presentEnv({ A: "", B: "0", C: " ", D: undefined, E: "x" })).toEqual({ B: "0", C: " ", E: "x" });
  });

  it("the simulator's settings: an empty variable is unset, for each one it reads", () => {
    for (const op of OPERATORS) {
      expect(overridesFromEnv(op, allEmpty(everySimVariable))).toEqual(overridesFromEnv(op, {}));
    }
    // The two the audit found stopping `npm start`.
    expect(overridesFromEnv("econet", { SIM_ECONET_RECEIPT_DELAY_MS: "", SIM_ECONET_PRESET: "" })).toEqual({
      behaviour: {},
    });
  });

  it("the simulator's settings still read a set value next to empty ones, and refuse a bad one", () => {
    const env = { SIM_ECONET_RECEIPT_DELAY_MS: "", SIM_ECONET_TPS_LIMIT: "40", SIM_ECONET_PRESET: "hex64" };
    expect(overridesFromEnv("econet", env)).toEqual({ behaviour: { tpsLimit: 40 }, preset: "hex64" });
    expect(() => overridesFromEnv("econet", { SIM_ECONET_PRESET: "nope" })).toThrow(/SIM_ECONET_PRESET/);
    expect(() => overridesFromEnv("econet", { SIM_ECONET_RECEIPT_DELAY_MS: " " })).toThrow(
      /SIM_ECONET_RECEIPT_DELAY_MS/,
    );
  });

  it("`shiri simulator`: an empty LOG_LEVEL or SIM_HOST is the default", () => {
    const defaults = simulatorSettings({});
    expect(defaults.logLevel).toBe("info");
    expect(defaults.host).toBeUndefined();
    expect(simulatorSettings({ ...allEmpty(everySimVariable), LOG_LEVEL: "", SIM_HOST: "" })).toEqual(
      defaults,
    );
    const set = simulatorSettings({ LOG_LEVEL: "warn", SIM_HOST: "127.0.0.1", SIM_NETONE_PORT: "2900" });
    expect(set).toMatchObject({
      logLevel: "warn",
      host: "127.0.0.1",
      perOperator: { netone: { port: 2900 } },
    });
  });

  it("the service's configuration and the simulators' settings read one environment alike", () => {
    const env = {
      ...allEmpty(everySimVariable),
      DATABASE_URL: "",
      LOG_LEVEL: "",
      SIM_TELECEL_DROP_RATE: "0.5",
    };
    expect(loadConfig(env)).toEqual(loadConfig(presentEnv(env)));
    expect(simulatorSettings(env)).toEqual(simulatorSettings(presentEnv(env)));
    expect(simulatorSettings(env).perOperator.telecel).toEqual({ behaviour: { dropRate: 0.5 } });
  });
});
