/**
 * The text of SMPP user data by its data_coding (SMPP 3.4 5.2.19), with the project's GSM 03.38
 * and UCS-2 tables: for a handset's message (src/inbound) and a receipt's text (deliver-sm.ts).
 */
import { decodeGsm7, decodeUcs2 } from "../domain/segments.ts";

/** The encodings an inbound message is decoded from, as the API names them. */
export const INBOUND_ENCODINGS = ["gsm7", "ascii", "latin1", "ucs2"] as const;
export type InboundEncoding = (typeof INBOUND_ENCODINGS)[number];

/**
 * The encoding a data_coding names (SMPP 3.4 5.2.19): 0 the SMSC default alphabet, taken to be
 * GSM 03.38 unpacked, one septet an octet (an assumption: no Zimbabwean SMSC observed); 1 IA5
 * (ASCII); 3 Latin-1; 8 UCS-2. The GSM message-class codings (0xF0–0xFF) are GSM 03.38 or 8-bit
 * by their bit 2. 8-bit binary and codings Shiri does not know are read as Latin-1, so every
 * octet shows as one character and none is lost (mobile_originated keeps the octets).
 */
export function encodingOf(dataCoding: number): InboundEncoding {
  if (dataCoding >= 0xf0) return (dataCoding & 0x04) === 0 ? "gsm7" : "latin1";
  switch (dataCoding) {
    case 0:
      return "gsm7";
    case 1:
      return "ascii";
    case 8:
      return "ucs2";
    default:
      return "latin1";
  }
}

/** Whether encodingOf had to guess: a data_coding that is not one of the four. */
export function isKnownDataCoding(dataCoding: number): boolean {
  return [0, 1, 3, 8].includes(dataCoding) || dataCoding >= 0xf0;
}

/**
 * The text of a message's octets (its parts' joined, so a character split between two parts is
 * read whole). Forgiving, since a handset's text is kept whatever it holds: a septet with its
 * eighth bit set is read without it, an escape with nothing after it is dropped, and a UCS-2 text
 * of an odd number of octets loses its last one. UCS-2 is read as UTF-16, so surrogate pairs
 * (emoji) survive.
 */
export function decodeText(octets: Buffer, encoding: InboundEncoding): string {
  switch (encoding) {
    case "gsm7": {
      if (sameAsAscii(octets)) return octets.toString("latin1");
      const septets = sevenBits(octets);
      // Masked to seven bits, the only thing decodeGsm7 can refuse is an unfinished last escape.
      try {
        return decodeGsm7(septets);
      } catch {
        return decodeGsm7(septets.subarray(0, -1));
      }
    }
    case "ascii":
      return sevenBits(octets).toString("latin1");
    case "latin1":
      return octets.toString("latin1");
    case "ucs2":
      return decodeUcs2(octets.subarray(0, octets.length - (octets.length % 2)));
  }
}

/**
 * The octets with their eighth bit cleared: the same octets when none has it set, as in nearly
 * every message (a Buffer's map() costs some microseconds a message, docs/decisions/0008).
 */
function sevenBits(octets: Buffer): Buffer {
  let masked: Buffer | null = null;
  for (let i = 0; i < octets.length; i++) {
    const octet = octets[i] as number;
    if (octet > 0x7f) {
      masked ??= Buffer.from(octets);
      masked[i] = octet & 0x7f;
    }
  }
  return masked ?? octets;
}

/**
 * The septets GSM 03.38's default alphabet shows as ASCII does: LF, CR, and 0x20–0x7E but for
 * 0x24 (¤), 0x40 (¡), 0x5B–0x60 (ÄÖÑÜ§¿) and 0x7B–0x7E (äöñü). A receipt's text is nearly always
 * all of these, and reads then as fast as Latin-1 (docs/decisions/0008-smpp-codec.md).
 */
const SAME_AS_ASCII = new Uint8Array(256);
for (let septet = 0x20; septet <= 0x7e; septet++) SAME_AS_ASCII[septet] = 1;
for (const septet of [0x24, 0x40, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f, 0x60, 0x7b, 0x7c, 0x7d, 0x7e])
  SAME_AS_ASCII[septet] = 0;
SAME_AS_ASCII[0x0a] = 1;
SAME_AS_ASCII[0x0d] = 1;

function sameAsAscii(octets: Buffer): boolean {
  for (let i = 0; i < octets.length; i++) if (SAME_AS_ASCII[octets[i] as number] === 0) return false;
  return true;
}
