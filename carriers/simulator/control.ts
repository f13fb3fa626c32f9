/**
 * The simulators' control port (loopback HTTP): how `shiri simulate-mo`, or anything else outside
 * the process, tells a running simulator to send a mobile-originated message to the links bound
 * to it. POST /mobile-originated with a JSON MobileOriginated and the operator whose simulator
 * sends it; the answer is each deliver_sm's answer.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { MO_CONCATENATIONS, MO_ENCODINGS } from "../../src/domain/mobile-originated.ts";
import { OPERATORS, type Operator } from "../types.ts";
import { type MobileOriginated, sendMobileOriginated } from "./mobile-originated.ts";
import type { CarrierSimulator } from "./simulator.ts";

const octet = () => z.int().min(0).max(255);

export const mobileOriginatedRequest = z
  .object({
    operator: z.enum(OPERATORS),
    from: z.string().min(1).max(20),
    to: z.string().min(1).max(20),
    text: z.string(),
    encoding: z.enum(MO_ENCODINGS).optional(),
    concatenation: z.enum(MO_CONCATENATIONS).optional(),
    partOctets: z.int().min(1).max(140).optional(),
    order: z.array(z.int().min(1).max(255)).min(1).optional(),
    acrossBinds: z.boolean().optional(),
    copies: z.int().min(1).max(10).optional(),
    reference: z.int().min(0).max(0xffff).optional(),
    source_addr_ton: octet().optional(),
    source_addr_npi: octet().optional(),
    dest_addr_ton: octet().optional(),
    dest_addr_npi: octet().optional(),
  })
  .strict();

export type MobileOriginatedRequest = z.infer<typeof mobileOriginatedRequest>;

/** The default control port: beside the simulators' SMPP ports. */
export const DEFAULT_CONTROL_PORT = 2780;

export async function startControl(
  simulators: Partial<Record<Operator, CarrierSimulator>>,
  listen: { host: string; port: number },
): Promise<{ port: number; stop(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const answer = (status: number, body: object) => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    if (req.method !== "POST" || req.url !== "/mobile-originated") return answer(404, { error: "not found" });
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let json: unknown;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return answer(400, { error: "the body is not JSON" });
      }
      const parsed = mobileOriginatedRequest.safeParse(json);
      if (!parsed.success) return answer(400, { error: z.prettifyError(parsed.error) });
      const { operator, ...mo } = parsed.data;
      const sim = simulators[operator];
      if (!sim) return answer(404, { error: `no simulator runs for ${operator}` });
      sendMobileOriginated(sim.boundSessionList(), mo satisfies MobileOriginated).then(
        (result) => answer(200, result),
        (err: unknown) => answer(409, { error: err instanceof Error ? err.message : String(err) }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
