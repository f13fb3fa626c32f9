import { describe, expect, it } from "vitest";
import { isDatabaseOutOfReach, isDatabaseUnavailable } from "../../src/db/pool.ts";

const withCode = (code: string, message = code) => Object.assign(new Error(message), { code });

/**
 * Both mean "try again" (a 503, a loop's next pass); only the database out of reach is an outage
 * the log tells in a few lines. A lock timeout meets one statement while the database serves the
 * rest: counting it as an outage held back every other failure's line for ten seconds.
 */
describe("a database error", () => {
  it("out of reach is both unavailable and an outage", () => {
    for (const err of [
      withCode("ECONNREFUSED"),
      withCode("57P01"),
      withCode("08006"),
      new Error("timeout exceeded when trying to connect"),
      new Error("wrapped", { cause: withCode("57P03") }),
    ]) {
      expect(isDatabaseUnavailable(err)).toBe(true);
      expect(isDatabaseOutOfReach(err)).toBe(true);
    }
  });

  it("of contention is unavailable for now, but no outage", () => {
    for (const code of ["55P03", "57014", "40P01", "40001", "25P03"]) {
      expect(isDatabaseUnavailable(withCode(code))).toBe(true);
      expect(isDatabaseOutOfReach(withCode(code))).toBe(false);
      expect(isDatabaseOutOfReach(new Error("wrapped", { cause: withCode(code) }))).toBe(false);
    }
  });

  it("of the request itself is neither", () => {
    for (const err of [withCode("23505"), withCode("22P02"), new Error("a bug"), null, "text"]) {
      expect(isDatabaseUnavailable(err)).toBe(false);
      expect(isDatabaseOutOfReach(err)).toBe(false);
    }
  });
});
