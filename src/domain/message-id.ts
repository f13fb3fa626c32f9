import { randomFillSync } from "node:crypto";

/*
 * Message ids are UUIDv7 (RFC 9562, section 5.7): the Unix time in milliseconds in the first 48
 * bits, then the version, 74 random bits and the variant. Ids made close together in time sort
 * close together, so a send's messages go to the right-hand edge of the primary key (and of
 * message_parts' key after them) instead of to a random leaf each: 10,000 messages inserted in
 * 95-97 ms instead of 119-120 ms (docs/decisions/0025-message-ids-uuidv7.md). The time in an
 * id is the message's received_at, which the API shows anyway; the 74 random bits keep ids
 * unguessable.
 */

const IDS_PER_FILL = 256;
const random = Buffer.alloc(16 * IDS_PER_FILL);
let nextId = IDS_PER_FILL;

/** A new UUIDv7 for a message received at `receivedAtMs` (Unix ms). */
export function newMessageId(receivedAtMs: number): string {
  if (!Number.isSafeInteger(receivedAtMs) || receivedAtMs < 0 || receivedAtMs >= 2 ** 48)
    throw new RangeError(`not a time a UUIDv7 can carry: ${receivedAtMs}`);
  // Random bytes drawn in blocks: one call to the generator per 256 ids.
  if (nextId === IDS_PER_FILL) {
    randomFillSync(random);
    nextId = 0;
  }
  const at = 16 * nextId++;
  const bytes = random.subarray(at, at + 16);
  bytes.writeUIntBE(receivedAtMs, 0, 6);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
