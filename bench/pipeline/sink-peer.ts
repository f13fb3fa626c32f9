import { z } from "zod";
import type { Cleanup } from "../lib/cleanup.ts";
import type { IdForm, TlvMode } from "../peers/sink-ids.ts";
import type { SinkCounts } from "../peers/smpp-sink.ts";
import { type PeerProcess, startPeer } from "./peer-process.ts";

/** The SMPP sink (peers/smpp-sink.ts) in its own process, and its loopback control endpoint. */
export interface SinkPeer {
  process: PeerProcess;
  smppPort: number;
  /** summary: without per_destination_part (cheap enough to poll). */
  counts(summary?: boolean): Promise<SinkCounts>;
  waitForBinds(binds: number, timeoutMs: number): Promise<void>;
  setMode(mode: TlvMode): Promise<void>;
  reset(): Promise<void>;
}

const announced = z.object({
  smpp_port: z.number().int().positive(),
  http_port: z.number().int().positive(),
});

/**
 * port: the sink's SMPP port (0: an ephemeral one); tlvId: its receipted_message_id TLV mode
 * (smpp-sink.ts --tlv-id); answerDelayMs: how long it holds each answer (--answer-delay-ms); ids:
 * numeric or opaque message ids (--ids, peers/sink-ids.ts). Registers the process's stop with `cleanup`.
 */
export async function startSinkPeer(
  cleanup: Cleanup,
  {
    port = 0,
    tlvId = "probe",
    answerDelayMs = 0,
    ids = "numeric",
  }: { port?: number; tlvId?: TlvMode; answerDelayMs?: number; ids?: IdForm } = {},
): Promise<SinkPeer> {
  const process = startPeer("SMPP sink", "../peers/smpp-sink.ts", [
    "--port",
    String(port),
    "--http-port",
    "0",
    "--tlv-id",
    tlvId,
    "--answer-delay-ms",
    String(answerDelayMs),
    "--ids",
    ids,
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
    counts,
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
