/**
 * The SMPP sink's message ids, in one place. Each accepted submit_sm gets a number N; the sink
 * writes it the way the econet adapter reads it today (carriers/econet.ts): hex in submit_sm_resp,
 * decimal in the receipt text's `id:` field.
 *
 * The receipted_message_id TLV is the open question. SMPP 3.4 (5.3.2.12) makes it the
 * submit_sm_resp id (hex here), and the carrier-id work (issue 9) reads it that way; Shiri before
 * that work reads the TLV with the receipt text's format (decimal). So the TLV's form is a mode:
 *   "submit"  — the submit_sm_resp id (the specification);
 *   "receipt" — the receipt text's id (what Shiri read before issue 9);
 *   "probe"   — by destination: a number ending in an even digit gets "receipt", odd "submit",
 *               so one probe message of each kind tells which one the service under test matches.
 *
 * N starts at 0xA0000000, so every hex id holds a letter: a hex id read as decimal is refused,
 * and a decimal id read as hex lands far outside the range of ids handed out. Reading an id the
 * wrong way therefore never matches another message: the receipt stays unmatched, and the run's
 * completeness check says so.
 */
export const TLV_MODES = ["submit", "receipt", "probe"] as const;

/**
 * "numeric": the ids above (hex answers, decimal receipts), which a client must be told to
 * convert. "opaque": one base36 id (letters and digits) in the answer, the receipt text and the
 * TLV alike, as a carrier that hands out opaque ids does: what issue 27 compared Shiri and Kannel
 * on, each on its defaults (Kannel's msg-id-type unset compares ids as strings; Shiri's "auto"
 * matches an opaque id exactly). The TLV mode is moot then: every form is the one id.
 */
export const ID_FORMS = ["numeric", "opaque"] as const;
export type IdForm = (typeof ID_FORMS)[number];

export const opaqueId = (n: bigint): string => n.toString(36);
export type TlvMode = (typeof TLV_MODES)[number];

export const FIRST_ID = 0xa000_0000n;

export const submitId = (n: bigint): string => n.toString(16);
export const receiptTextId = (n: bigint): string => n.toString(10);

export function receiptedMessageId(n: bigint, mode: TlvMode, destination: string): string {
  const form = mode === "probe" ? probeForm(destination) : mode;
  return form === "submit" ? submitId(n) : receiptTextId(n);
}

/** Which form "probe" mode writes for this destination. */
export function probeForm(destination: string): "submit" | "receipt" {
  return Number(destination.at(-1)) % 2 === 0 ? "receipt" : "submit";
}
