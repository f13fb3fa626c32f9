import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { OPERATORS } from "../../carriers/index.ts";
import {
  ConfigError,
  loadConfig,
  productionRefusal,
  productionWarnings,
  startWarnings,
} from "../../src/config.ts";
import { openDatabase } from "../../src/db/database.ts";

/** The renamed settings still read, each with its new name (docs/configuration.md, aliases). */
const ALIASES = [
  ["RATE_LIMIT_KEY_REQUESTS_PER_SECOND", "RATE_LIMIT_KEY_PER_SECOND"],
  ["RATE_LIMIT_ACCOUNT_REQUESTS_PER_SECOND", "RATE_LIMIT_ACCOUNT_PER_SECOND"],
  ["DISPATCH_JOBS_IN_FLIGHT", "DISPATCH_MAX_IN_FLIGHT"],
] as const;

/** Every variable loadConfig reads: the top-level settings, each link's SMPP_<LINK>_<FIELD> and the routes. */
function everyVariable(): string[] {
  const defaults = loadConfig({});
  // Optional settings left unset are absent from the parsed object: name them here.
  const optional = [
    "DATABASE_URL",
    "SMPP_LINKS",
    ...OPERATORS.map((op) => `ROUTE_${op.toUpperCase()}`),
    ...ALIASES.map(([old]) => old),
  ];
  const bookkeeping = ["links", "routes", "emptyPasswords", "unreadSettings"];
  const names = [...Object.keys(defaults).filter((key) => !bookkeeping.includes(key)), ...optional];
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
    // Only the record of the passwords given empty (for a refusal's wording) tells them apart.
    expect({ ...loadConfig(empty), emptyPasswords: [] }).toEqual(loadConfig({}));
    expect(loadConfig(empty).emptyPasswords).toEqual(
      OPERATORS.map((op) => `SMPP_${op.toUpperCase()}_PASSWORD`),
    );
    expect(loadConfig({ DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
  });

  it("refuses every variable of spaces alone, naming it (a number would read it as 0)", () => {
    for (const name of everyVariable())
      expect(() => loadConfig({ [name]: "  " }), name).toThrow(new RegExp(`\\n  ${name}: `));
  });

  it("refuses, naming it, a value its use could not hold: ports, timers, SMPP octets, DNS servers", () => {
    const refused = (env: Record<string, string>, name: string) => {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(name);
    };
    refused({ PORT: "70000" }, "PORT");
    refused({ METRICS_PORT: "65536" }, "METRICS_PORT");
    refused({ SMPP_ECONET_PORT: "99999" }, "SMPP_ECONET_PORT");
    // Past 2^31 - 1 ms, Node fires a timer after 1 ms; Postgres refuses such a timeout.
    refused({ PG_CONNECT_TIMEOUT_MS: "2147483648" }, "PG_CONNECT_TIMEOUT_MS");
    refused({ AUDIT_INTERVAL_MS: "2592000000" }, "AUDIT_INTERVAL_MS");
    refused({ PG_STATEMENT_TIMEOUT_MS: "99999999999" }, "PG_STATEMENT_TIMEOUT_MS");
    refused({ SMPP_ECONET_RESPONSE_TIMEOUT_MS: "2147483648" }, "SMPP_ECONET_RESPONSE_TIMEOUT_MS");
    refused({ SMPP_ECONET_SOURCE_ADDR_TON: "300" }, "SMPP_ECONET_SOURCE_ADDR_TON");
    refused({ SMPP_TELECEL_DEST_ADDR_NPI: "256" }, "SMPP_TELECEL_DEST_ADDR_NPI");
    refused({ WEBHOOK_DNS_SERVERS: "not a server!!" }, "WEBHOOK_DNS_SERVERS");
    refused({ WEBHOOK_DNS_SERVERS: "10.0.0.2:99999" }, "WEBHOOK_DNS_SERVERS");
    const edge = loadConfig({
      PORT: "65535",
      PG_CONNECT_TIMEOUT_MS: "2147483647",
      SMPP_ECONET_SOURCE_ADDR_TON: "255",
      WEBHOOK_DNS_SERVERS: "10.0.0.2, 10.0.0.3:5353, [2001:db8::1]:53, 2001:db8::2",
    });
    expect(edge.PORT).toBe(65_535);
    expect(edge.PG_CONNECT_TIMEOUT_MS).toBe(2_147_483_647);
    expect(edge.links.econet?.source_addr_ton).toBe(255);
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

  it.each([
    ["on", true],
    ["true", true],
    ["1", true],
    ["off", false],
    ["false", false],
    ["0", false],
  ])("reads the yes/no switches START_SIMULATORS and WEBHOOK_ALLOW_PRIVATE=%s as %s", (value, on) => {
    for (const SHIRI_ENV of ["production", "development"]) {
      const config = loadConfig({ SHIRI_ENV, START_SIMULATORS: value, WEBHOOK_ALLOW_PRIVATE: value });
      expect([config.START_SIMULATORS, config.WEBHOOK_ALLOW_PRIVATE]).toEqual([on, on]);
    }
  });

  it("refuses a yes/no switch that is none of on, off, true, false, 1, 0, naming it", () => {
    for (const value of ["yes", "ON", "2"])
      expect(() => loadConfig({ START_SIMULATORS: value })).toThrow(/START_SIMULATORS: .*"on"\|"off"/);
  });

  it("takes a worker's nice value within what the system accepts, 5 unless set", () => {
    expect(loadConfig({}).WORKER_NICE).toBe(5);
    expect(loadConfig({ WORKER_NICE: "0" }).WORKER_NICE).toBe(0);
    expect(loadConfig({ WORKER_NICE: "19" }).WORKER_NICE).toBe(19);
    for (const bad of ["20", "-1", "2.5", "low"])
      expect(() => loadConfig({ WORKER_NICE: bad }), bad).toThrow(ConfigError);
  });

  it("refuses production without a database rather than fall back to the embedded one", async () => {
    for (const env of [{}, { SHIRI_ENV: "production" }, { SHIRI_ENV: "production", DATABASE_URL: "" }])
      await expect(openDatabase(loadConfig(env))).rejects.toThrow(
        /DATABASE_URL is unset and SHIRI_ENV is production \(the default\)/,
      );
    const url = "postgres://shiri@db:5432/shiri";
    expect((await openDatabase(loadConfig({ DATABASE_URL: url }))).url).toBe(url);
  });
});

describe("production is the default, and safe", () => {
  const real = {
    SMPP_ECONET_PASSWORD: "e-real",
    SMPP_NETONE_PASSWORD: "n-real",
    SMPP_TELECEL_PASSWORD: "t-real",
  };

  it("is production unless development is asked for: private callbacks refused, no simulators", () => {
    const config = loadConfig({});
    expect(config.SHIRI_ENV).toBe("production");
    expect([config.WEBHOOK_ALLOW_PRIVATE, config.START_SIMULATORS]).toEqual([false, false]);
    // NODE_ENV says how the code runs (compiled or not), not where: production all the same.
    expect(loadConfig({ NODE_ENV: "production" }).SHIRI_ENV).toBe("production");
    expect(productionRefusal(loadConfig({ NODE_ENV: "production" }))).not.toBeNull();
    const development = loadConfig({ SHIRI_ENV: "development" });
    expect([development.WEBHOOK_ALLOW_PRIVATE, development.START_SIMULATORS]).toEqual([true, true]);
    expect(productionRefusal(development)).toBeNull();
  });

  it("warns, a line each, of overrides that undo a protection in production", () => {
    expect(productionWarnings(loadConfig(real))).toEqual([]);
    const open = loadConfig({
      ...real,
      WEBHOOK_ALLOW_PRIVATE: "on",
      TRUSTED_PROXIES: "10.0.0.0/8,0.0.0.0/0,::/0",
    });
    const warnings = productionWarnings(open);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^WEBHOOK_ALLOW_PRIVATE is on/);
    expect(warnings[1]).toMatch(/^TRUSTED_PROXIES holds 0\.0\.0\.0\/0, ::\/0:/);
    expect(productionWarnings(loadConfig({ ...real, TRUSTED_PROXIES: "10.0.0.0/8" }))).toEqual([]);
    expect(productionWarnings({ ...open, SHIRI_ENV: "development" })).toEqual([]);
  });

  it("refuses, in one line naming the setting, the simulators' passwords, an empty one and the simulators", () => {
    expect(productionRefusal(loadConfig({}))).toMatch(
      /^SMPP_ECONET_PASSWORD is the carrier simulator's password/,
    );
    // An empty setting counts as unset: it falls back to the simulator's password, refused too,
    // in words that say what the operator did (set it empty), not that they typed the simulator's.
    expect(productionRefusal(loadConfig({ ...real, SMPP_NETONE_PASSWORD: "" }))).toMatch(
      /^SMPP_NETONE_PASSWORD is set but empty, which leaves the carrier simulator's password: production needs/,
    );
    expect(productionRefusal(loadConfig({ ...real, SMPP_NETONE_PASSWORD: "netone1" }))).toMatch(
      /^SMPP_NETONE_PASSWORD is the carrier simulator's password/,
    );
    expect(
      productionRefusal(
        loadConfig({ SMPP_LINKS: "agg", ROUTE_ECONET: "agg", ROUTE_NETONE: "agg", ROUTE_TELECEL: "agg" }),
      ),
    ).toMatch(/^SMPP_AGG_PASSWORD is empty/);
    expect(productionRefusal(loadConfig({ ...real, START_SIMULATORS: "true" }))).toMatch(
      /^START_SIMULATORS is on/,
    );
    expect(productionRefusal(loadConfig(real))).toBeNull();
    for (const line of [productionRefusal(loadConfig({})) ?? ""]) expect(line).not.toContain("\n");
  });
});

describe("numbers their use cannot hold are refused at start, naming the setting", () => {
  const refused = (env: Record<string, string>, pattern: RegExp) => {
    expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigError);
    expect(() => loadConfig(env), JSON.stringify(env)).toThrow(pattern);
  };

  it("refuses 0 for a count or a size that 0 breaks (DISPATCH_BATCH_SIZE=0 looped enqueueing forever)", () => {
    for (const name of [
      "DISPATCH_BATCH_SIZE",
      "MAX_SEGMENTS",
      "BULK_MAX_RECIPIENTS",
      "BODY_LIMIT_BYTES",
      "BATCH_BODY_LIMIT_BYTES",
      "IDEMPOTENCY_TTL_HOURS",
      "SMPP_ECONET_PORT",
      "EMBEDDED_PG_PORT",
    ])
      refused({ [name]: "0" }, new RegExp(`\\n  ${name}: .*>=1`));
  });

  it("keeps 0 where the docs give it a meaning", () => {
    const zero = loadConfig({
      BULK_MAX_REPEATS: "0",
      RATE_LIMIT_KEY_PER_SECOND: "0",
      RATE_LIMIT_ACCOUNT_PER_SECOND: "0",
      AUTH_FAILURES_PER_MINUTE: "0",
      WEBHOOK_REDELIVERIES_PER_HOUR: "0",
      WEBHOOK_SECRET_GRACE_HOURS: "0",
      SMPP_ECONET_TPS_LIMIT: "0",
      PORT: "0",
      METRICS_PORT: "0",
      DISPATCH_POLL_MS: "0",
    });
    expect([zero.BULK_MAX_REPEATS, zero.RATE_LIMIT_KEY_PER_SECOND, zero.links.econet?.tps_limit]).toEqual([
      0, 0, 0,
    ]);
  });

  it("refuses seconds past what a timer holds, and pg-boss's 24 hours for its own", () => {
    // BIND_LEASE_SECONDS=100000000 overflowed the lease timer: a standby busy-looped on the database.
    for (const name of [
      "BIND_LEASE_SECONDS",
      "DISPATCH_LOCK_SECONDS",
      "RECEIPT_GRACE_SECONDS",
      "INBOUND_REPEAT_WINDOW_SECONDS",
      "INBOUND_REASSEMBLY_SECONDS",
      "KEY_LAST_USED_PRECISION_SECONDS",
    ]) {
      refused({ [name]: "100000000" }, new RegExp(`\\n  ${name}: .*<=2147483`));
      expect(loadConfig({ [name]: "2147483" })[name as "BIND_LEASE_SECONDS"]).toBe(2_147_483);
    }
    for (const name of [
      "QUEUE_SUPERVISE_SECONDS",
      "DISPATCH_JOB_EXPIRE_SECONDS",
      "DISPATCH_JOB_HEARTBEAT_SECONDS",
    ])
      refused({ [name]: "86401" }, new RegExp(`\\n  ${name}: .*<=86400`));
  });

  it("refuses hours and days past a hundred years (a Date holds them added to now)", () => {
    // MESSAGE_VALIDITY_HOURS=1e10 made a send with deliver_between answer 500 (Invalid time value).
    for (const name of [
      "MESSAGE_VALIDITY_HOURS",
      "WEBHOOK_RETRY_HOURS",
      "WEBHOOK_SECRET_GRACE_HOURS",
      "IDEMPOTENCY_TTL_HOURS",
    ]) {
      refused({ [name]: "876001" }, new RegExp(`\\n  ${name}: .*<=876000`));
      expect(loadConfig({ [name]: "876000" })[name as "MESSAGE_VALIDITY_HOURS"]).toBe(876_000);
    }
    for (const name of ["MESSAGE_RETENTION_DAYS", "WEBHOOK_RETENTION_DAYS"])
      refused({ [name]: "36501" }, new RegExp(`\\n  ${name}: .*<=36500`));
    refused({ MAX_SEGMENTS: "256" }, /MAX_SEGMENTS: .*<=255/);
    refused({ RATE_LIMIT_KEY_PER_SECOND: "2147483648" }, /RATE_LIMIT_KEY_PER_SECOND: .*<=2147483647/);
  });

  it("reads numbers in plain decimal digits only: no hex, no exponent; spaces around dropped", () => {
    for (const value of ["0x50", "1e3", "0b11", "+80", "Infinity", "8 0"])
      refused({ PORT: value }, /\n {2}PORT: expected a whole number in plain decimal digits/);
    refused({ MESSAGE_VALIDITY_HOURS: "1e10" }, /MESSAGE_VALIDITY_HOURS: expected a number in plain decimal/);
    refused({ MESSAGE_VALIDITY_HOURS: "0x10" }, /MESSAGE_VALIDITY_HOURS: expected a number in plain decimal/);
    refused({ SMPP_ECONET_WINDOW_SIZE: "1e2" }, /SMPP_ECONET_WINDOW_SIZE: expected a whole number/);
    expect(loadConfig({ PORT: "080" }).PORT).toBe(80);
    // As Number() read them before: a CR from an env file written on Windows, a trailing space.
    expect([loadConfig({ PORT: "3000\r" }).PORT, loadConfig({ PORT: " 80 " }).PORT]).toEqual([3000, 80]);
    expect(loadConfig({ MESSAGE_VALIDITY_HOURS: "24\r" }).MESSAGE_VALIDITY_HOURS).toBe(24);
    expect(loadConfig({ MESSAGE_VALIDITY_HOURS: ".5" }).MESSAGE_VALIDITY_HOURS).toBe(0.5);
  });

  it("refuses a DATABASE_URL that is not Postgres's", () => {
    refused(
      { DATABASE_URL: "mysql://shiri@db:3306/shiri" },
      /DATABASE_URL: expected a postgres:\/\/ or postgresql:\/\//,
    );
    for (const url of ["postgres://shiri@db:5432/shiri", "postgresql://shiri@db/shiri"])
      expect(loadConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
  });

  it("warns of an SMPP system_id over 15 characters, a password over 8, a system_type over 12", () => {
    // Warned, not refused: credentials a carrier issued and binds with today keep starting.
    const long = loadConfig({
      SMPP_ECONET_SYSTEM_ID: "a".repeat(16),
      SMPP_NETONE_PASSWORD: "123456789",
      SMPP_TELECEL_SYSTEM_TYPE: "a".repeat(13),
    });
    expect(long.links.netone?.password).toBe("123456789");
    const warnings = startWarnings(long);
    expect(warnings.filter((w) => w.includes("SMPP 3.4 allows"))).toEqual([
      "SMPP_ECONET_SYSTEM_ID has 16 characters; SMPP 3.4 allows 15: it goes to the SMSC as it is, which may refuse the bind",
      "SMPP_NETONE_PASSWORD has 9 characters; SMPP 3.4 allows 8: it goes to the SMSC as it is, which may refuse the bind",
      "SMPP_TELECEL_SYSTEM_TYPE has 13 characters; SMPP 3.4 allows 12: it goes to the SMSC as it is, which may refuse the bind",
    ]);
    expect(startWarnings(loadConfig({ SMPP_ECONET_PASSWORD: "pässwörd" }))).toContain(
      "SMPP_ECONET_PASSWORD is not printable ASCII: the SMSC may read it otherwise than it is written",
    );
    const edge = loadConfig({ SMPP_ECONET_SYSTEM_ID: "a".repeat(15), SMPP_ECONET_PASSWORD: "12345678" });
    expect(startWarnings(edge).filter((w) => w.startsWith("SMPP_ECONET"))).toEqual([]);
  });
});

describe("renamed settings and SMPP settings no link reads", () => {
  it("reads each old name as an alias of its new one; the new one wins when both are set", () => {
    const old = loadConfig({
      RATE_LIMIT_KEY_REQUESTS_PER_SECOND: "7",
      RATE_LIMIT_ACCOUNT_REQUESTS_PER_SECOND: "9",
      DISPATCH_JOBS_IN_FLIGHT: "8",
    });
    expect([old.RATE_LIMIT_KEY_PER_SECOND, old.RATE_LIMIT_ACCOUNT_PER_SECOND]).toEqual([7, 9]);
    // Jobs of DISPATCH_BATCH_SIZE messages each (50 by default): 8 jobs were 400 messages in flight.
    expect(old.DISPATCH_MAX_IN_FLIGHT).toBe(400);
    expect(
      loadConfig({ DISPATCH_JOBS_IN_FLIGHT: "8", DISPATCH_BATCH_SIZE: "10" }).DISPATCH_MAX_IN_FLIGHT,
    ).toBe(80);
    for (const [oldName, newName] of ALIASES) {
      const both = loadConfig({ [oldName]: "3", [newName]: "5" });
      expect(both[newName], oldName).toBe(5);
      expect(() => loadConfig({ [oldName]: "x" }), oldName).toThrow(new RegExp(`\\n  ${oldName}: `));
    }
  });

  it("names every SMPP_* variable no link reads, with why, for the start to warn of", () => {
    const config = loadConfig({
      SMPP_LINKS: "econet,agg",
      ROUTE_NETONE: "agg",
      ROUTE_TELECEL: "agg",
      SMPP_AGG_HOST: "smsc.example",
      SMPP_NETONE_PORT: "2776",
      SMPP_ECONET_PASWORD: "typo",
      SMPP_GATEWAY: "x",
      SMPP_OLD_NUMERIC_SOURCE_ADDR_TON: "1",
    });
    expect(config.unreadSettings).toEqual([
      "SMPP_ECONET_PASWORD is not read: link econet has no setting PASWORD (see docs/configuration.md)",
      "SMPP_GATEWAY is not read: no setting has that name (a link's are SMPP_<LINK>_<FIELD>)",
      "SMPP_NETONE_PORT is not read: no link named netone in SMPP_LINKS (econet,agg)",
      "SMPP_OLD_NUMERIC_SOURCE_ADDR_TON is not read: no link named old in SMPP_LINKS (econet,agg)",
    ]);
    expect(startWarnings(config)).toEqual(expect.arrayContaining(config.unreadSettings as string[]));
    // The operators' own SMPP_<OP>_HOST and the rest stay read by the default links: no warning.
    expect(
      loadConfig({ SMPP_ECONET_HOST: "smsc.econet", SMPP_TELECEL_PASSWORD: "t" }).unreadSettings,
    ).toEqual([]);
    expect(loadConfig({ SMPP_ECONET_HOST: "smsc.econet" }).links.econet?.host).toBe("smsc.econet");
  });
});

describe("the embedded Postgres's data folder", () => {
  it("is the checkout's .data by default, wherever the command runs from; a path set is read as given", () => {
    const checkout = fileURLToPath(new URL("../../", import.meta.url));
    expect(loadConfig({}).DATA_DIR).toBe(path.join(checkout, ".data"));
    expect(loadConfig({ DATA_DIR: "elsewhere" }).DATA_DIR).toBe("elsewhere");
  });
});

describe("the client's read limit", () => {
  it("is warned of when it is not above the statement timeout, and not otherwise", () => {
    const warned = startWarnings(
      loadConfig({ PG_STATEMENT_TIMEOUT_MS: "10000", PG_READ_TIMEOUT_MS: "8000" }),
    );
    expect(warned.some((w) => w.startsWith("PG_READ_TIMEOUT_MS=8000 is not above"))).toBe(true);
    for (const env of [{ PG_READ_TIMEOUT_MS: "20000" }, {}])
      expect(startWarnings(loadConfig(env)).filter((w) => w.startsWith("PG_READ_TIMEOUT_MS"))).toEqual([]);
  });
});
