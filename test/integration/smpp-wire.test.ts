/**
 * SmppWire (src/smpp/wire.ts) over a real loopback socket: PDUs cut at any point by TCP come out
 * whole and in order, requests are numbered, and a command_length out of SMPP's bounds is a
 * framing error that stops the reading, while a PDU whose body does not read is reported and the
 * reading goes on.
 */
import net, { type AddressInfo } from "node:net";
import smpp from "smpp";
import { afterEach, describe, expect, it } from "vitest";
import { type Pdu, request, responseTo, stringField, tlvValue } from "../../src/smpp/pdu.ts";
import type { PduBodyError } from "../../src/smpp/pdu-codec.ts";
import { submitSm } from "../../src/smpp/submit-sm.ts";
import { MAX_PDU_BYTES, SmppWire } from "../../src/smpp/wire.ts";
import { deliverSmBytes, payloadMoBytes, receiptText, SUBMIT_FIELDS } from "../support/pdus.ts";
import { waitFor } from "../support/wait-for.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A loopback server that hands each accepted socket to `onSocket`, and a wire connected to it. */
async function connected(onSocket: (socket: net.Socket) => void): Promise<SmppWire> {
  const server = net.createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const wire = new SmppWire({ host: "127.0.0.1", port: (server.address() as AddressInfo).port });
  cleanups.push(() => {
    wire.destroy();
    server.close();
  });
  await new Promise<void>((resolve) => wire.once("connect", resolve));
  return wire;
}

const receipt = (sequence: number): Buffer =>
  deliverSmBytes({
    short_message: receiptText(sequence),
    receipted_message_id: String(sequence),
    message_state: 2,
    sequence_number: sequence,
  });

describe("SmppWire", () => {
  it("puts PDUs cut at every byte, and many in one chunk, back together in order", async () => {
    const pdus = [1, 2, 3].map(receipt);
    const stream = Buffer.concat([
      ...pdus,
      new smpp.PDU("submit_sm_resp", { message_id: "abc", sequence_number: 4 }).toBuffer(),
      new smpp.PDU("enquire_link", { sequence_number: 5 }).toBuffer(),
    ]);
    const wire = await connected((socket) => {
      socket.setNoDelay(true);
      // The first half byte by byte, each in a write of its own; the rest in one write.
      const half = Math.floor(stream.length / 2);
      let at = 0;
      const next = () => {
        if (at < half) {
          socket.write(stream.subarray(at, at + 1), () => setImmediate(next));
          at++;
        } else socket.write(stream.subarray(half));
      };
      next();
    });
    let chunks = 0;
    wire.socket.on("data", () => chunks++);
    const received: Pdu[] = [];
    wire.on("pdu", (pdu: Pdu) => received.push(pdu));
    await waitFor(() => received.length === 5, { timeoutMs: 10_000 });
    // The stream did come in pieces smaller than a PDU.
    expect(chunks).toBeGreaterThan(stream.length / 4);
    expect(received.map((p) => [p.command, p.sequence_number])).toEqual([
      ["deliver_sm", 1],
      ["deliver_sm", 2],
      ["deliver_sm", 3],
      ["submit_sm_resp", 4],
      ["enquire_link", 5],
    ]);
    expect(received.slice(0, 3).map((p) => tlvValue(p, "receipted_message_id"))).toEqual(["1", "2", "3"]);
    expect(stringField(received[3] as Pdu, "message_id")).toBe("abc");
  });

  it("numbers its requests from 1 and leaves a response's number as it is", async () => {
    const chunks: Buffer[] = [];
    const wire = await connected((socket) => socket.on("data", (chunk: Buffer) => chunks.push(chunk)));
    const submit = submitSm(SUBMIT_FIELDS);
    const enquire = request("enquire_link");
    const answer = responseTo({ ...request("deliver_sm"), sequence_number: 42 });
    expect(wire.send(submit)).toBe(true);
    expect(wire.send(enquire)).toBe(true);
    expect(wire.send(answer)).toBe(true);
    expect([submit.sequence_number, enquire.sequence_number, answer.sequence_number]).toEqual([1, 2, 42]);
    await waitFor(() => Buffer.concat(chunks).length >= 3 * 16, { timeoutMs: 5_000 });
    const bytes = Buffer.concat(chunks);
    const seen: Array<[string, number]> = [];
    for (let at = 0; at < bytes.length; at += bytes.readUInt32BE(at)) {
      const pdu = new smpp.PDU(Buffer.from(bytes.subarray(at, at + bytes.readUInt32BE(at))));
      seen.push([pdu.command, pdu.sequence_number]);
    }
    expect(seen).toEqual([
      ["submit_sm", 1],
      ["enquire_link", 2],
      ["deliver_sm_resp", 42],
    ]);
  });

  it("reports a command_length out of bounds as an error and reads nothing after it", async () => {
    const bad = Buffer.alloc(16);
    bad.writeUInt32BE(8, 0);
    const wire = await connected((socket) => socket.write(Buffer.concat([receipt(1), bad, receipt(2)])));
    const received: Pdu[] = [];
    const errors: Error[] = [];
    wire.on("pdu", (pdu: Pdu) => received.push(pdu));
    wire.on("error", (error: Error) => errors.push(error));
    await waitFor(() => errors.length === 1, { timeoutMs: 5_000 });
    expect(errors[0]?.message).toMatch(/PDU length/);
    expect(received.map((p) => p.sequence_number)).toEqual([1]);
  });

  it("reads a deliver_sm with a message_payload of 65,535 octets whole, and the PDUs after it", async () => {
    const large = payloadMoBytes(7, "263771799999", 65_535);
    const answer = new smpp.PDU("submit_sm_resp", { message_id: "abc", sequence_number: 8 }).toBuffer();
    const wire = await connected((socket) => socket.write(Buffer.concat([receipt(1), large, answer])));
    const received: Pdu[] = [];
    const errors: Error[] = [];
    wire.on("pdu", (pdu: Pdu) => received.push(pdu));
    wire.on("error", (error: Error) => errors.push(error));
    await waitFor(() => received.length === 3 || errors.length > 0, { timeoutMs: 5_000 });
    expect(errors).toEqual([]);
    expect(received.map((p) => [p.command, p.sequence_number])).toEqual([
      ["deliver_sm", 1],
      ["deliver_sm", 7],
      ["submit_sm_resp", 8],
    ]);
    expect((tlvValue(received[1] as Pdu, "message_payload") as Buffer).length).toBe(65_535);
  });

  it("hands over the answers ahead of a command_length over its bound before giving up", async () => {
    const answers = [3, 4].map((sequence) =>
      new smpp.PDU("submit_sm_resp", { message_id: `id${sequence}`, sequence_number: sequence }).toBuffer(),
    );
    const tooLong = Buffer.alloc(16);
    tooLong.writeUInt32BE(MAX_PDU_BYTES + 1, 0);
    const after = new smpp.PDU("submit_sm_resp", { message_id: "id5", sequence_number: 5 }).toBuffer();
    const wire = await connected((socket) => socket.write(Buffer.concat([...answers, tooLong, after])));
    const received: Pdu[] = [];
    const errors: Error[] = [];
    /** What had been read when the error came, when the session drops the connection. */
    const readBeforeError: number[] = [];
    wire.on("pdu", (pdu: Pdu) => received.push(pdu));
    wire.on("error", (error: Error) => {
      errors.push(error);
      readBeforeError.push(...received.map((p) => p.sequence_number));
    });
    await waitFor(() => errors.length === 1, { timeoutMs: 5_000 });
    expect(errors[0]?.message).toMatch(/PDU length was out of bounds \(70001, 16 to 70000\)/);
    expect(readBeforeError).toEqual([3, 4]);
    expect(received.map((p) => stringField(p, "message_id"))).toEqual(["id3", "id4"]);
  });

  it("reports a PDU whose body does not read, with its header, and reads on", async () => {
    // A deliver_sm whose source_addr has no NUL within its 21 octets.
    const bad = deliverSmBytes({ source_addr: "2".repeat(30), sequence_number: 9 });
    const wire = await connected((socket) => socket.write(Buffer.concat([receipt(1), bad, receipt(2)])));
    const received: Pdu[] = [];
    const invalid: PduBodyError[] = [];
    wire.on("pdu", (pdu: Pdu) => received.push(pdu));
    wire.on("invalid", (error: PduBodyError) => invalid.push(error));
    await waitFor(() => received.length === 2, { timeoutMs: 5_000 });
    expect(received.map((p) => p.sequence_number)).toEqual([1, 2]);
    expect(invalid.map((e) => [e.header.command, e.header.sequence_number])).toEqual([["deliver_sm", 9]]);
    expect(invalid[0]?.message).toMatch(/source_addr has no NUL within 21 octets/);
  });
});
