import { describe, expect, it } from "vitest";
import {
  canonicalTimeZone,
  type DeliveryWindow,
  isInside,
  nextOpening,
} from "../../src/domain/delivery-window.ts";

const harare: DeliveryWindow = { start: "08:00", end: "20:00", time_zone: "Africa/Harare" }; // UTC+2
const at = (iso: string) => new Date(iso);

describe("delivery windows", () => {
  it("a message due inside the window goes at once", () => {
    expect(nextOpening(harare, at("2026-03-10T06:00:00Z"))).toEqual(at("2026-03-10T06:00:00Z")); // 08:00 local
    expect(nextOpening(harare, at("2026-03-10T17:59:59Z"))).toEqual(at("2026-03-10T17:59:59Z"));
  });

  it("before the start waits for today's start; at or after the end, for tomorrow's", () => {
    expect(nextOpening(harare, at("2026-03-10T03:30:00Z"))).toEqual(at("2026-03-10T06:00:00Z"));
    expect(nextOpening(harare, at("2026-03-10T18:00:00Z"))).toEqual(at("2026-03-11T06:00:00Z")); // 20:00 local
    expect(nextOpening(harare, at("2026-03-10T21:59:00Z"))).toEqual(at("2026-03-11T06:00:00Z"));
  });

  it("reads the local date, not UTC's: 00:30 in Harare is 22:30 UTC the day before", () => {
    expect(nextOpening(harare, at("2026-03-09T22:30:00Z"))).toEqual(at("2026-03-10T06:00:00Z"));
  });

  it("crosses the end of a month and a year", () => {
    expect(nextOpening(harare, at("2026-12-31T19:00:00Z"))).toEqual(at("2027-01-01T06:00:00Z"));
  });

  it("a window over midnight (22:00 to 06:00) is open at night and shut by day", () => {
    const night: DeliveryWindow = { start: "22:00", end: "06:00", time_zone: "UTC" };
    expect(isInside(night, at("2026-03-10T23:00:00Z"))).toBe(true);
    expect(isInside(night, at("2026-03-10T05:59:00Z"))).toBe(true);
    expect(isInside(night, at("2026-03-10T06:00:00Z"))).toBe(false);
    expect(nextOpening(night, at("2026-03-10T12:00:00Z"))).toEqual(at("2026-03-10T22:00:00Z"));
  });

  it("follows daylight saving: 08:00 in New York is 13:00 UTC in winter, 12:00 in summer", () => {
    const ny: DeliveryWindow = { start: "08:00", end: "20:00", time_zone: "America/New_York" };
    expect(nextOpening(ny, at("2026-01-15T05:00:00Z"))).toEqual(at("2026-01-15T13:00:00Z"));
    expect(nextOpening(ny, at("2026-07-15T05:00:00Z"))).toEqual(at("2026-07-15T12:00:00Z"));
    // The night the clocks go forward (2026-03-08, 02:00 → 03:00): 08:00 is 12:00 UTC.
    expect(nextOpening(ny, at("2026-03-08T06:30:00Z"))).toEqual(at("2026-03-08T12:00:00Z"));
  });

  it("a start the clock change skips is moved forward by the gap", () => {
    const ny: DeliveryWindow = { start: "02:30", end: "04:00", time_zone: "America/New_York" };
    // 2026-03-08 02:30 does not exist in New York: the clocks go from 02:00 EST to 03:00 EDT.
    const opening = nextOpening(ny, at("2026-03-08T06:00:00Z")); // 01:00 EST
    expect(opening).toEqual(at("2026-03-08T07:30:00Z")); // 03:30 EDT
    expect(isInside(ny, opening)).toBe(true);
  });

  it("a start the clocks go back over opens at its first occurrence", () => {
    const london: DeliveryWindow = { start: "01:30", end: "03:00", time_zone: "Europe/London" };
    // 2027-10-31: 01:30 comes twice in London, first at 00:30 UTC (BST), then at 01:30 UTC (GMT).
    expect(nextOpening(london, at("2027-10-30T23:00:00Z"))).toEqual(at("2027-10-31T00:30:00Z"));
    expect(isInside(london, at("2027-10-31T00:30:00Z"))).toBe(true);
  });

  it("a message due between the two occurrences of a repeated start waits for the second, not a day", () => {
    const ny: DeliveryWindow = { start: "01:00", end: "01:30", time_zone: "America/New_York" };
    // 2025-11-02: 01:30 EDT (05:30 UTC) is just past the window; at 06:00 UTC the clocks read
    // 01:00 EST, inside it again. Before, it waited for the next day's 01:00, 24.5 hours later.
    expect(isInside(ny, at("2025-11-02T06:00:00Z"))).toBe(true);
    expect(nextOpening(ny, at("2025-11-02T05:30:00Z"))).toEqual(at("2025-11-02T06:00:00Z"));
  });

  it("knows time zones by their IANA name, in any letter case", () => {
    expect(canonicalTimeZone("africa/harare")).toBe("Africa/Harare");
    expect(canonicalTimeZone("UTC")).toBe("UTC");
    expect(canonicalTimeZone("Mars/Olympus")).toBeNull();
    expect(canonicalTimeZone("")).toBeNull();
  });
});
