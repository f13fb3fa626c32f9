/**
 * The forms a handset's message takes on the SMPP wire, as Shiri reads them and as `shiri
 * simulate-mo` asks the carrier simulator to send them: the text's encoding, and how the parts of
 * a long one say they belong together (UDH with an 8- or 16-bit reference, or the sar_* TLVs).
 */
export const MO_ENCODINGS = ["gsm7", "ascii", "latin1", "ucs2"] as const;
export type MoEncoding = (typeof MO_ENCODINGS)[number];
export const MO_CONCATENATIONS = ["udh8", "udh16", "sar"] as const;
export type MoConcatenation = (typeof MO_CONCATENATIONS)[number];
