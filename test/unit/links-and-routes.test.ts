import { describe, expect, it } from "vitest";
import { CARRIERS } from "../../carriers/index.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { Routes } from "../../src/dispatch/routes.ts";

describe("links and routes from the environment", () => {
  it("keeps one link per operator, named after it, by default", () => {
    const config = loadConfig({});
    expect(Object.keys(config.links)).toEqual(["econet", "netone", "telecel"]);
    expect(config.routes).toEqual({ econet: ["econet"], netone: ["netone"], telecel: ["telecel"] });
    expect(config.links.econet?.port).toBe(CARRIERS.econet.smpp.port);
    // Nothing claims a network's id format: every default link matches tolerantly.
    for (const settings of Object.values(config.links))
      expect([settings.id_format_submit, settings.id_format_receipt]).toEqual(["auto", "auto"]);
  });

  it("reads an aggregator link carrying every operator, with SMPP_<LINK>_* as its settings", () => {
    const config = loadConfig({
      SMPP_LINKS: "agg",
      SMPP_AGG_HOST: "smsc.example",
      SMPP_AGG_PORT: "2800",
      SMPP_AGG_PASSWORD: "secret",
      SMPP_AGG_MAX_BINDS: "2",
      ROUTE_ECONET: "agg",
      ROUTE_NETONE: "agg",
      ROUTE_TELECEL: "agg",
    });
    expect(Object.keys(config.links)).toEqual(["agg"]);
    expect(config.links.agg).toMatchObject({
      host: "smsc.example",
      port: 2800,
      password: "secret",
      max_binds: 2,
    });
    expect(new Set(Object.values(config.routes).flat())).toEqual(new Set(["agg"]));
  });

  it("keeps SMPP_<OPERATOR>_* working for the link named after the operator", () => {
    const config = loadConfig({
      SMPP_LINKS: "econet,backup",
      SMPP_ECONET_HOST: "10.0.0.7",
      ROUTE_ECONET: "econet,backup",
      ROUTE_NETONE: "backup",
      ROUTE_TELECEL: "backup",
    });
    expect(config.links.econet?.host).toBe("10.0.0.7");
    expect(config.routes.econet).toEqual(["econet", "backup"]);
  });

  it("refuses a route to a link that does not exist, and a bad link name, naming the setting", () => {
    expect(() => loadConfig({ ROUTE_ECONET: "nowhere" })).toThrow(/ROUTE_ECONET: no link named nowhere/);
    expect(() => loadConfig({ SMPP_LINKS: "Bad-Name" })).toThrow(ConfigError);
    // Every route that names no link, in one start, not one a start.
    expect(() => loadConfig({ SMPP_LINKS: "agg" })).toThrow(
      /ROUTE_ECONET: no link named econet.*\n.*ROUTE_NETONE: no link named netone.*\n.*ROUTE_TELECEL: no link named telecel/,
    );
    expect(() => loadConfig({ SMPP_ECONET_PORT: "x" })).toThrow(/SMPP_ECONET_PORT/);
  });
});

describe("routes: the first link of an operator's route that is not down", () => {
  it("fails over to the next link while the first is down, and back once it is up", () => {
    const down = new Set<string>();
    const routes = new Routes(
      { econet: ["primary", "backup"], netone: ["backup"], telecel: ["primary"] },
      (link) => down.has(link),
    );
    expect(routes.serving("econet")).toBe("primary");
    down.add("primary");
    expect(routes.serving("econet")).toBe("backup");
    expect(routes.serves("econet", "backup")).toBe(true);
    // With every link down the messages wait for the first.
    expect(routes.serving("telecel")).toBe("primary");
    down.delete("primary");
    expect(routes.serving("econet")).toBe("primary");
    expect(routes.operatorsOf("backup").sort()).toEqual(["econet", "netone"]);
  });
});
