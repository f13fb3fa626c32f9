import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";

describe("MESSAGE_VALIDITY_HOURS", () => {
  it("defaults to 24 hours and accepts fractions, so tests can expire messages in seconds", () => {
    expect(loadConfig({}).MESSAGE_VALIDITY_HOURS).toBe(24);
    expect(loadConfig({ MESSAGE_VALIDITY_HOURS: "0.001" }).MESSAGE_VALIDITY_HOURS).toBe(0.001);
    expect(loadConfig({ MESSAGE_VALIDITY_HOURS: "1.5" }).MESSAGE_VALIDITY_HOURS).toBe(1.5);
  });

  it("refuses zero, negative and non-numeric values", () => {
    for (const value of ["0", "-1", "soon"])
      expect(() => loadConfig({ MESSAGE_VALIDITY_HOURS: value }), value).toThrow(ConfigError);
  });
});
