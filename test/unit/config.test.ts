import { describe, expect, it } from "vitest";
import { OPERATORS } from "../../carriers/index.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";

/** Every variable loadConfig reads: the top-level settings, each link's SMPP_<LINK>_<FIELD> and the routes. */
function everyVariable(): string[] {
  const defaults = loadConfig({});
  // Optional settings left unset are absent from the parsed object: name them here.
  const optional = ["DATABASE_URL", "SMPP_LINKS", ...OPERATORS.map((op) => `ROUTE_${op.toUpperCase()}`)];
  const names = [...Object.keys(defaults).filter((key) => key !== "links" && key !== "routes"), ...optional];
  for (const [link, settings] of Object.entries(defaults.links)) {
    for (const field of Object.keys(settings)) {
      names.push(`SMPP_${link.toUpperCase()}_${field.toUpperCase()}`);
    }
  }
  return names;
}

describe("configuration from the environment", () => {
  it("treats every variable set to the empty string as unset", () => {
    const names = everyVariable();
    expect(names).toContain("DATABASE_URL");
    expect(names).toContain("SMPP_ECONET_PORT");
    const empty = Object.fromEntries(names.map((name) => [name, ""]));
    expect(loadConfig(empty)).toEqual(loadConfig({}));
    expect(loadConfig({ DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
  });

  it("still reads the variables that are set next to empty ones", () => {
    const config = loadConfig({ DATABASE_URL: "", PORT: "8080", SMPP_NETONE_PORT: "2800", HOST: "" });
    expect(config.PORT).toBe(8080);
    expect(config.links.netone?.port).toBe(2800);
    expect(config.HOST).toBe(loadConfig({}).HOST);
  });

  it("still refuses a value that is set and invalid", () => {
    expect(() => loadConfig({ DATABASE_URL: "not a url" })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: "-1" })).toThrow(ConfigError);
  });

  it("takes a worker's nice value within what the system accepts, 5 unless set", () => {
    expect(loadConfig({}).WORKER_NICE).toBe(5);
    expect(loadConfig({ WORKER_NICE: "0" }).WORKER_NICE).toBe(0);
    expect(loadConfig({ WORKER_NICE: "19" }).WORKER_NICE).toBe(19);
    for (const bad of ["20", "-1", "2.5", "low"])
      expect(() => loadConfig({ WORKER_NICE: bad }), bad).toThrow(ConfigError);
  });

  it("refuses production without a database rather than fall back to the embedded one", () => {
    expect(() => loadConfig({ SHIRI_ENV: "production" })).toThrow(/SHIRI_ENV=production needs DATABASE_URL/);
    expect(() => loadConfig({ SHIRI_ENV: "production", DATABASE_URL: "" })).toThrow(ConfigError);
    const url = "postgres://shiri@db:5432/shiri";
    expect(loadConfig({ SHIRI_ENV: "production", DATABASE_URL: url }).DATABASE_URL).toBe(url);
  });
});
