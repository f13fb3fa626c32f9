import { z } from "zod";
import type { TlvMode } from "../peers/sink-ids.ts";
import type { SinkCounts } from "../peers/smpp-sink.ts";
import type { Cleanup } from "../scenarios/env.ts";
import { type PeerProcess, startPeer } from "./peer-process.ts";

/** The SMPP sink (peers/smpp-sink.ts) in its own process, and its loopback control endpoint. */
export interface SinkPeer {
  process: PeerProcess;
  smppPort: number;
  counts(): Promise<SinkCounts>;
  waitForBinds(binds: number, timeoutMs: number): Promise<void>;
  setMode(mode: TlvMode): Promise<void>;
  reset(): Promise<void>;
}

const announced = z.object({
  smpp_port: z.number().int().positive(),
  http_port: z.number().int().positive(),
});

export async function startSinkPeer(cleanup: Cleanup): Promise<SinkPeer> {
  const process = startPeer("SMPP sink", "../peers/smpp-sink.ts", [
    "--port",
    "0",
    "--http-port",
    "0",
    "--tlv-id",
    "probe",
  ]);
  cleanup.add(process.stop);
  const ports = announced.parse(await process.firstLine(30_000));
  const control = `http://127.0.0.1:${ports.http_port}`;
  const call = async (method: "GET" | "POST", path: string): Promise<unknown> => {
    const res = await fetch(`${control}${path}`, { method, signal: AbortSignal.timeout(30_000) });
    const body: unknown = await res.json();
    if (!res.ok) throw new Error(`SMPP sink ${method} ${path}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  };
  const counts = async (summary = false) =>
    (await call("GET", `/counts${summary ? "?summary" : ""}`)) as SinkCounts;
  return {
    process,
    smppPort: ports.smpp_port,
    counts: () => counts(),
    async waitForBinds(binds, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while ((await counts(true)).binds < binds) {
        if (process.exited()) throw new Error(`the SMPP sink exited:\n${process.output()}`);
        if (Date.now() > deadline)
          throw new Error(`the worker did not bind ${binds} times to the sink in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async setMode(mode) {
      await call("POST", `/mode?tlv=${mode}`);
    },
    async reset() {
      await call("POST", "/reset");
    },
  };
}
