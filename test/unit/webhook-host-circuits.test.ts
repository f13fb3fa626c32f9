import { describe, expect, it } from "vitest";
import { HostCircuits, OPEN_FORGET_MS } from "../../src/webhooks/host-circuits.ts";

const timedOut = { answered: false, timedOut: true };
const answered = { answered: true, timedOut: false };
const neither = { answered: false, timedOut: false };

describe("host circuits", () => {
  it("a closed host is fetched like any other, however many of its jobs run", () => {
    const c = new HostCircuits();
    for (let i = 0; i < 3; i++) c.started("a:1");
    expect(c.openHosts()).toEqual([]);
    expect(c.wantsProbe()).toBe(false);
  });

  it("a timeout opens the host: out of the main fetch; one probe at a time from the probe fetch", () => {
    const c = new HostCircuits();
    c.started("a:1");
    c.started("a:1");
    expect(c.finished("a:1", timedOut)).toBe(true); // opened
    // Its other job, fetched before the timeout, still runs: no probe until it is done.
    expect(c.openHosts()).toEqual(["a:1"]);
    expect(c.probing()).toEqual(["a:1"]);
    expect(c.wantsProbe()).toBe(false);
    expect(c.finished("a:1", timedOut)).toBe(false); // already open
    expect(c.probing()).toEqual([]);
    expect(c.wantsProbe()).toBe(true);
    // The probe starts: the probe fetch now skips the host as well.
    c.started("a:1");
    expect(c.probing()).toEqual(["a:1"]);
    expect(c.wantsProbe()).toBe(false);
    expect(c.openHosts()).toEqual(["a:1"]);
  });

  it("any answer closes it; a job that neither answered nor timed out changes nothing", () => {
    const c = new HostCircuits();
    c.started("a:1");
    c.finished("a:1", timedOut);
    c.started("a:1");
    c.finished("a:1", neither);
    expect(c.isOpen("a:1")).toBe(true);
    c.started("a:1");
    c.finished("a:1", answered);
    expect(c.isOpen("a:1")).toBe(false);
    expect(c.openHosts()).toEqual([]);
  });

  it("a job that got answers and a timeout does not open the host, and closes it if open", () => {
    const c = new HostCircuits();
    c.started("a:1");
    expect(c.finished("a:1", { answered: true, timedOut: true })).toBe(false);
    expect(c.isOpen("a:1")).toBe(false);
    c.started("a:1");
    c.finished("a:1", timedOut);
    c.started("a:1");
    c.finished("a:1", { answered: true, timedOut: true });
    expect(c.isOpen("a:1")).toBe(false);
  });

  it("says how long a host has been held, from its first timeout until an answer", () => {
    let now = 1_000_000;
    const c = new HostCircuits(() => now);
    expect(c.heldFor("a:1")).toBe(0);
    c.started("a:1");
    c.finished("a:1", timedOut);
    now += 60_000;
    c.started("a:1");
    c.finished("a:1", timedOut); // still held: its first timeout counts
    expect(c.heldFor("a:1")).toBe(60_000);
    c.started("a:1");
    c.finished("a:1", answered);
    expect(c.heldFor("a:1")).toBe(0);
  });

  it("forgets an open host with no job and no timeout for OPEN_FORGET_MS", () => {
    let now = 1_000_000;
    const c = new HostCircuits(() => now);
    c.started("a:1");
    c.finished("a:1", timedOut);
    c.started("b:1");
    c.finished("b:1", timedOut);
    c.started("b:1"); // b's probe runs
    now += OPEN_FORGET_MS + 1;
    expect(c.openHosts()).toEqual(["b:1"]);
    expect(c.isOpen("a:1")).toBe(false);
  });
});
