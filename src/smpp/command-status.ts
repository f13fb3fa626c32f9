/**
 * Every SMPP 3.4 command_status (section 5.1.3), and what a sender should do when a submit_sm_resp
 * carries it: retry later, back off (the carrier is overloaded or throttling us), or fail the
 * message for good. One table, in the manner of Jasmin's, so the policy reads in one place.
 */

/** "ok" only for ESME_ROK: the carrier accepted the PDU. */
export type StatusAction = "ok" | "retry" | "backoff" | "fail";

export interface StatusInfo {
  name: string;
  description: string;
  action: StatusAction;
}

type Row = readonly [code: number, name: string, description: string, action: StatusAction];

const ROWS = [
  [0x00, "ESME_ROK", "No error", "ok"],
  [0x01, "ESME_RINVMSGLEN", "Message length is invalid", "fail"],
  [0x02, "ESME_RINVCMDLEN", "Command length is invalid", "fail"],
  [0x03, "ESME_RINVCMDID", "Invalid command id", "fail"],
  // The SMSC thinks we are not bound: the session rebinds, after which the same PDU can go through.
  [0x04, "ESME_RINVBNDSTS", "Incorrect bind status for given command", "retry"],
  [0x05, "ESME_RALYBND", "ESME already in bound state", "retry"],
  [0x06, "ESME_RINVPRTFLG", "Invalid priority flag", "fail"],
  [0x07, "ESME_RINVREGDLVFLG", "Invalid registered delivery flag", "fail"],
  [0x08, "ESME_RSYSERR", "System error", "retry"],
  [0x0a, "ESME_RINVSRCADR", "Invalid source address", "fail"],
  [0x0b, "ESME_RINVDSTADR", "Invalid destination address", "fail"],
  [0x0c, "ESME_RINVMSGID", "Message id is invalid", "fail"],
  [0x0d, "ESME_RBINDFAIL", "Bind failed", "backoff"],
  [0x0e, "ESME_RINVPASWD", "Invalid password", "fail"],
  [0x0f, "ESME_RINVSYSID", "Invalid system id", "fail"],
  [0x11, "ESME_RCANCELFAIL", "cancel_sm failed", "fail"],
  [0x13, "ESME_RREPLACEFAIL", "replace_sm failed", "fail"],
  [0x14, "ESME_RMSGQFUL", "Message queue full", "backoff"],
  [0x15, "ESME_RINVSERTYP", "Invalid service type", "fail"],
  [0x33, "ESME_RINVNUMDESTS", "Invalid number of destinations", "fail"],
  [0x34, "ESME_RINVDLNAME", "Invalid distribution list name", "fail"],
  [0x40, "ESME_RINVDESTFLAG", "Destination flag is invalid", "fail"],
  [0x42, "ESME_RINVSUBREP", "Invalid submit with replace request", "fail"],
  [0x43, "ESME_RINVESMCLASS", "Invalid esm_class field data", "fail"],
  [0x44, "ESME_RCNTSUBDL", "Cannot submit to distribution list", "fail"],
  [0x45, "ESME_RSUBMITFAIL", "submit_sm or submit_multi failed", "retry"],
  [0x48, "ESME_RINVSRCTON", "Invalid source address TON", "fail"],
  [0x49, "ESME_RINVSRCNPI", "Invalid source address NPI", "fail"],
  [0x50, "ESME_RINVDSTTON", "Invalid destination address TON", "fail"],
  [0x51, "ESME_RINVDSTNPI", "Invalid destination address NPI", "fail"],
  [0x53, "ESME_RINVSYSTYP", "Invalid system_type field", "fail"],
  [0x54, "ESME_RINVREPFLAG", "Invalid replace_if_present flag", "fail"],
  [0x55, "ESME_RINVNUMMSGS", "Invalid number of messages", "fail"],
  [0x58, "ESME_RTHROTTLED", "Throttling error (ESME has exceeded allowed message limits)", "backoff"],
  [0x61, "ESME_RINVSCHED", "Invalid scheduled delivery time", "fail"],
  [0x62, "ESME_RINVEXPIRY", "Invalid message validity period (expiry time)", "fail"],
  [0x63, "ESME_RINVDFTMSGID", "Predefined message invalid or not found", "fail"],
  [0x64, "ESME_RX_T_APPN", "ESME receiver temporary app error", "retry"],
  [0x65, "ESME_RX_P_APPN", "ESME receiver permanent app error", "fail"],
  [0x66, "ESME_RX_R_APPN", "ESME receiver reject message error", "fail"],
  [0x67, "ESME_RQUERYFAIL", "query_sm request failed", "fail"],
  [0xc0, "ESME_RINVOPTPARSTREAM", "Error in the optional part of the PDU body", "fail"],
  [0xc1, "ESME_ROPTPARNOTALLWD", "Optional parameter not allowed", "fail"],
  [0xc2, "ESME_RINVPARLEN", "Invalid parameter length", "fail"],
  [0xc3, "ESME_RMISSINGOPTPARAM", "Expected optional parameter missing", "fail"],
  [0xc4, "ESME_RINVOPTPARAMVAL", "Invalid optional parameter value", "fail"],
  [0xfe, "ESME_RDELIVERYFAILURE", "Delivery failure (data_sm_resp)", "retry"],
  // "Unknown error" says nothing about permanence; a bounded retry costs little and often succeeds.
  [0xff, "ESME_RUNKNOWNERR", "Unknown error", "retry"],
  // SMPP 5.0 codes: some SMSCs send them on 3.4 binds too.
  [0x100, "ESME_RSERTYPUNAUTH", "ESME not authorised to use specified service_type", "fail"],
  [0x101, "ESME_RPROHIBITED", "ESME prohibited from using specified operation", "fail"],
  [0x102, "ESME_RSERTYPUNAVAIL", "Specified service_type is unavailable", "retry"],
  [0x103, "ESME_RSERTYPDENIED", "Specified service_type is denied", "fail"],
  [0x104, "ESME_RINVDCS", "Invalid data coding scheme", "fail"],
  [0x105, "ESME_RINVSRCADDRSUBUNIT", "Source address sub unit is invalid", "fail"],
  [0x106, "ESME_RINVDSTADDRSUBUNIT", "Destination address sub unit is invalid", "fail"],
] as const satisfies readonly Row[];

export type StatusName = (typeof ROWS)[number][1];

export const COMMAND_STATUS: ReadonlyMap<number, StatusInfo> = new Map(
  ROWS.map(([code, name, description, action]) => [code, { name, description, action }]),
);

/** Codes by name, for code that wants to write `STATUS.ESME_RTHROTTLED` rather than 0x58. */
export const STATUS = Object.fromEntries(ROWS.map(([code, name]) => [name, code])) as Readonly<
  Record<StatusName, number>
>;

/** SMPP 3.4 reserves 0x400–0x4FF for SMSC vendor-specific errors; their meaning is per carrier. */
const VENDOR_RANGE = { from: 0x400, to: 0x4ff } as const;

function hex(code: number): string {
  return `0x${code.toString(16).padStart(8, "0")}`;
}

/** "ESME_RTHROTTLED (0x00000058)", or a vendor/unknown label for codes outside the table. */
export function describeStatus(code: number): string {
  const info = COMMAND_STATUS.get(code);
  if (info) return `${info.name} (${hex(code)})`;
  if (code >= VENDOR_RANGE.from && code <= VENDOR_RANGE.to) return `vendor-specific error (${hex(code)})`;
  return `unknown command_status (${hex(code)})`;
}

/**
 * What to do about a command_status. Codes outside the table fail: SMPP 3.4 documents no range as
 * transient (the vendor range 0x400–0x4FF means whatever each SMSC says), and retrying a permanent
 * error forever costs the customer money and the carrier's goodwill. A carrier whose vendor codes
 * are known to be transient passes them in `overrides`.
 */
export function actionFor(code: number, overrides?: ReadonlyMap<number, StatusAction>): StatusAction {
  return overrides?.get(code) ?? COMMAND_STATUS.get(code)?.action ?? "fail";
}

/**
 * "retry" statuses that speak of the SMSC or the session, not of the PDU (a system error of its
 * own, which may last for minutes and refuse every submit; the SMSC taking us for unbound, or
 * bound already): like throttling, the link's state, so never counted against a message.
 */
const LINK_STATE_STATUSES: ReadonlySet<number> = new Set([
  STATUS.ESME_RSYSERR,
  STATUS.ESME_RINVBNDSTS,
  STATUS.ESME_RALYBND,
]);

/**
 * Whether a submit_sm_resp with this status is a refusal of the message that may pass (a "retry"
 * of the table): counted as one of the message's refused tries, of which it has only so many.
 */
export function isPassingRefusal(code: number): boolean {
  return actionFor(code) === "retry" && !LINK_STATE_STATUSES.has(code);
}
