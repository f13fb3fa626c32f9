/**
 * The bench's tally of the callbacks the load process streams (bench/pipeline/remote-receiver.ts),
 * fed as the load process feeds it over IPC.
 */

import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { LoadControl, LoadMessage } from "../../bench/peers/load-protocol.ts";
import type { PeerProcess } from "../../bench/pipeline/peer-process.ts";
import { remoteReceiver } from "../../bench/pipeline/remote-receiver.ts";

function fakeLoad() {
  const child = new EventEmitter() as EventEmitter & { sent: LoadControl[] };
  child.sent = [];
  const send = (m: LoadControl) => {
    child.sent.push(m);
    return true;
  };
  const peer = {
    pid: 1,
    child: Object.assign(child, { send }) as unknown as ChildProcess,
    output: () => "",
    exited: () => false,
    firstLine: async () => null,
    stop: async () => {},
  } satisfies PeerProcess;
  const emit = (m: LoadMessage) => child.emit("message", m);
  return { peer, child, emit };
}

describe("the tally of the load process's callbacks", () => {
  it("keeps the delivered type's arrivals per id, counts the others, passes the rest on", async () => {
    const { peer, child, emit } = fakeLoad();
    const passed: LoadMessage[] = [];
    const pending = remoteReceiver(peer, "1", (m) => passed.push(m), 1_000);
    emit({ type: "receiver", url: "http://127.0.0.1:9/dlr" });
    const receiver = await pending;
    expect(receiver.url).toBe("http://127.0.0.1:9/dlr");

    emit({
      type: "callbacks",
      arrivals: [
        ["1", "263771000001", 10, 5],
        ["2", "263771000002", 11, 6],
        ["1", "263771000001", 12, 5],
        ["1", null, 13, null],
      ],
      requests: 4,
      badSignatures: 0,
      unreadable: 1,
    });
    emit({ type: "progress", responses: 7 });
    expect(receiver.delivered.get("263771000001")).toEqual([10, 12]);
    expect(receiver.delivered.has("263771000002")).toBe(false);
    expect(receiver.sentAt.get("263771000001")).toBe(5);
    expect(Object.fromEntries(receiver.byType)).toEqual({ "1": 3, "2": 1 });
    expect([receiver.requests, receiver.unreadable]).toEqual([4, 1]);
    expect(passed).toEqual([{ type: "progress", responses: 7 }]);

    receiver.setSecret("s3cret");
    receiver.reset();
    receiver.start();
    expect(child.sent).toEqual([{ type: "secret", secret: "s3cret" }, { type: "reset" }, { type: "start" }]);
    expect([receiver.delivered.size, receiver.byType.size, receiver.requests]).toEqual([0, 0, 0]);
  });

  it("fails when the load process never announces its receiver", async () => {
    const { peer } = fakeLoad();
    await expect(remoteReceiver(peer, "message.delivered", () => {}, 50)).rejects.toThrow(
      /did not start its receiver/,
    );
  });
});
