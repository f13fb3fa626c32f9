import { createSocket } from "node:dgram";
import { isIPv4 } from "node:net";

/**
 * A DNS server on loopback (UDP), enough for A and AAAA questions: `answer` gives the addresses
 * for each question, by name, record type and the question's number of that type (1, 2, …), so a
 * name can change address from one lookup to the next. TTL 0: nothing may keep an answer.
 */
export interface DnsQuestion {
  name: string;
  type: "A" | "AAAA" | "other";
  /** How many questions of this name and type came before, plus one. */
  count: number;
}

export interface DnsServer {
  /** host:port, as WEBHOOK_DNS_SERVERS takes it. */
  address: string;
  /** Every question asked, in order, with the addresses answered. */
  log: Array<DnsQuestion & { answered: string[] }>;
  stop(): Promise<void>;
}

const TYPES: Record<number, DnsQuestion["type"]> = { 1: "A", 28: "AAAA" };

export async function startDnsServer(answer: (q: DnsQuestion) => string[]): Promise<DnsServer> {
  const socket = createSocket("udp4");
  const counts = new Map<string, number>();
  const log: DnsServer["log"] = [];
  socket.on("message", (query, peer) => {
    const question = readQuestion(query);
    if (!question) return;
    const type = TYPES[question.qtype] ?? "other";
    const key = `${question.name} ${type}`;
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    const wanted = type === "other" ? [] : answer({ name: question.name, type, count });
    const addresses = wanted.filter((a) => (type === "A" ? isIPv4(a) : !isIPv4(a)));
    log.push({ name: question.name, type, count, answered: addresses });
    socket.send(response(query, question.end, question.qtype, addresses), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    log,
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** The first question's name, type and where it ends, or null for a message that is not a query. */
function readQuestion(msg: Buffer): { name: string; qtype: number; end: number } | null {
  if (msg.length < 12 || (msg.readUInt16BE(2) & 0x8000) !== 0 || msg.readUInt16BE(4) < 1) return null;
  const labels: string[] = [];
  let i = 12;
  while (i < msg.length && msg[i] !== 0) {
    const length = msg[i] as number;
    labels.push(msg.subarray(i + 1, i + 1 + length).toString("ascii"));
    i += 1 + length;
  }
  if (i + 5 > msg.length) return null;
  return { name: labels.join(".").toLowerCase(), qtype: msg.readUInt16BE(i + 1), end: i + 5 };
}

/** The answer: the query's header and question, then one record per address (a pointer to the name). */
function response(query: Buffer, questionEnd: number, qtype: number, addresses: string[]): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0); // id
  header.writeUInt16BE(0x8180 | (query.readUInt16BE(2) & 0x0100), 2); // response, recursion as asked, no error
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addresses.length, 6);
  const records = addresses.map((address) => {
    const data = qtype === 1 ? Buffer.from(address.split(".").map(Number)) : ipv6Bytes(address);
    const record = Buffer.alloc(12);
    record.writeUInt16BE(0xc00c, 0); // the name, as in the question
    record.writeUInt16BE(qtype, 2);
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(0, 6); // TTL
    record.writeUInt16BE(data.length, 10);
    return Buffer.concat([record, data]);
  });
  return Buffer.concat([header, query.subarray(12, questionEnd), ...records]);
}

function ipv6Bytes(address: string): Buffer {
  const [head = "", tail = ""] = address.split("::");
  const groups = (part: string) => (part ? part.split(":") : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = [
    ...groups(head),
    ...Array<string>(address.includes("::") ? missing : 0).fill("0"),
    ...groups(tail),
  ];
  const bytes = Buffer.alloc(16);
  for (const [n, group] of all.entries()) bytes.writeUInt16BE(Number.parseInt(group, 16), n * 2);
  return bytes;
}
