/**
 * Shiri's SMPP PDU: a plain object, and the protocol facts its codec (pdu-codec.ts) reads as data,
 * in the manner of node-smpp's `defs`: each command's id and its mandatory fields in order with
 * their types, and the optional parameters (TLVs) by tag with theirs. Why Shiri owns this rather
 * than node-smpp: docs/decisions/0008-smpp-codec.md.
 */

/** A field's value: integers as numbers, C-octet strings as strings, octet strings as octets. */
export type FieldValue = number | string | Buffer;

/** An optional parameter; an unknown tag keeps its value as the octets that came. */
export interface Tlv {
  tag: number;
  value: FieldValue;
}

export interface Pdu {
  /** The command's name, "unknown" for a command_id SMPP does not define. */
  command: string;
  command_id: number;
  command_status: number;
  /** 0 on a request until the wire numbers it. */
  sequence_number: number;
  /** Mandatory parameters by name; a body that ends early leaves the rest out. */
  fields: Record<string, FieldValue>;
  tlvs: Tlv[];
}

/**
 * int8/16/32: unsigned big-endian integers. cstring: a C-octet string of at most `max` octets
 * with its NUL (SMPP 3.4 3.1). octets8: an octet string preceded by its length in one octet
 * (short_message after sm_length).
 */
export type FieldType = "int8" | "int16" | "int32" | "cstring" | "octets8";
export interface FieldSpec {
  name: string;
  type: FieldType;
  /** For a cstring: its maximum size, the NUL included (none: up to the end of the PDU). */
  max?: number;
}

const int8 = (name: string): FieldSpec => ({ name, type: "int8" });
const cstring = (name: string, max: number): FieldSpec => ({ name, type: "cstring", max });

const BIND: readonly FieldSpec[] = [
  cstring("system_id", 16),
  cstring("password", 9),
  cstring("system_type", 13),
  int8("interface_version"),
  int8("addr_ton"),
  int8("addr_npi"),
  cstring("address_range", 41),
];
const BIND_RESP: readonly FieldSpec[] = [cstring("system_id", 16)];
/** submit_sm and deliver_sm share their body (SMPP 3.4 4.4.1 and 4.6.1). */
const SHORT_MESSAGE: readonly FieldSpec[] = [
  cstring("service_type", 6),
  int8("source_addr_ton"),
  int8("source_addr_npi"),
  cstring("source_addr", 21),
  int8("dest_addr_ton"),
  int8("dest_addr_npi"),
  cstring("destination_addr", 21),
  int8("esm_class"),
  int8("protocol_id"),
  int8("priority_flag"),
  cstring("schedule_delivery_time", 17),
  cstring("validity_period", 17),
  int8("registered_delivery"),
  int8("replace_if_present_flag"),
  int8("data_coding"),
  int8("sm_default_msg_id"),
  { name: "short_message", type: "octets8" },
];
/**
 * SMPP gives message_id 65 octets; carriers send longer ones, which dispatch takes and counts as
 * unusable for matching (docs/decisions/0001), so it is read up to its NUL whatever its length.
 */
const MESSAGE_ID: readonly FieldSpec[] = [{ name: "message_id", type: "cstring" }];

/**
 * Every command SMPP 3.4 and 5.0 define, by name: its id, and the body Shiri reads and writes.
 * A command without `body` is one the session only refuses (with its resp and ESME_RINVCMDID)
 * or answers with a header alone, so its body is not read.
 */
export const COMMANDS: Readonly<Record<string, { id: number; body?: readonly FieldSpec[] }>> = {
  generic_nack: { id: 0x80000000, body: [] },
  bind_receiver: { id: 0x00000001, body: BIND },
  bind_receiver_resp: { id: 0x80000001, body: BIND_RESP },
  bind_transmitter: { id: 0x00000002, body: BIND },
  bind_transmitter_resp: { id: 0x80000002, body: BIND_RESP },
  query_sm: { id: 0x00000003 },
  query_sm_resp: { id: 0x80000003 },
  submit_sm: { id: 0x00000004, body: SHORT_MESSAGE },
  submit_sm_resp: { id: 0x80000004, body: MESSAGE_ID },
  deliver_sm: { id: 0x00000005, body: SHORT_MESSAGE },
  deliver_sm_resp: { id: 0x80000005, body: MESSAGE_ID },
  unbind: { id: 0x00000006, body: [] },
  unbind_resp: { id: 0x80000006, body: [] },
  replace_sm: { id: 0x00000007 },
  replace_sm_resp: { id: 0x80000007 },
  cancel_sm: { id: 0x00000008 },
  cancel_sm_resp: { id: 0x80000008 },
  bind_transceiver: { id: 0x00000009, body: BIND },
  bind_transceiver_resp: { id: 0x80000009, body: BIND_RESP },
  outbind: { id: 0x0000000b, body: [cstring("system_id", 16), cstring("password", 9)] },
  enquire_link: { id: 0x00000015, body: [] },
  enquire_link_resp: { id: 0x80000015, body: [] },
  submit_multi: { id: 0x00000021 },
  submit_multi_resp: { id: 0x80000021 },
  alert_notification: {
    id: 0x00000102,
    body: [
      int8("source_addr_ton"),
      int8("source_addr_npi"),
      cstring("source_addr", 65),
      int8("esme_addr_ton"),
      int8("esme_addr_npi"),
      cstring("esme_addr", 65),
    ],
  },
  data_sm: { id: 0x00000103 },
  data_sm_resp: { id: 0x80000103 },
  broadcast_sm: { id: 0x00000111 },
  broadcast_sm_resp: { id: 0x80000111 },
  query_broadcast_sm: { id: 0x00000112 },
  query_broadcast_sm_resp: { id: 0x80000112 },
  cancel_broadcast_sm: { id: 0x00000113 },
  cancel_broadcast_sm_resp: { id: 0x80000113 },
};

export const COMMAND_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(COMMANDS).map(([name, { id }]) => [id, name]),
);

/** A TLV's value type: `octets` and `string` take the TLV's length; `cstring` ends with a NUL. */
export type TlvType = "int8" | "int16" | "int32" | "cstring" | "string" | "octets";

/** The optional parameters of SMPP 3.4 (5.3.2) Shiri reads or writes, and the common others. */
const TLV_ROWS: ReadonlyArray<readonly [name: string, tag: number, type: TlvType]> = [
  ["dest_addr_subunit", 0x0005, "int8"],
  ["source_addr_subunit", 0x000d, "int8"],
  ["payload_type", 0x0019, "int8"],
  ["additional_status_info_text", 0x001d, "cstring"],
  ["receipted_message_id", 0x001e, "cstring"],
  ["ms_msg_wait_facilities", 0x0030, "int8"],
  ["privacy_indicator", 0x0201, "int8"],
  ["user_message_reference", 0x0204, "int16"],
  ["user_response_code", 0x0205, "int8"],
  ["source_port", 0x020a, "int16"],
  ["dest_port", 0x020b, "int16"],
  ["sar_msg_ref_num", 0x020c, "int16"],
  ["language_indicator", 0x020d, "int8"],
  ["sar_total_segments", 0x020e, "int8"],
  ["sar_segment_seqnum", 0x020f, "int8"],
  ["sc_interface_version", 0x0210, "int8"],
  ["dpf_result", 0x0420, "int8"],
  ["ms_availability_status", 0x0422, "int8"],
  ["network_error_code", 0x0423, "octets"],
  ["message_payload", 0x0424, "octets"],
  ["delivery_failure_reason", 0x0425, "int8"],
  ["more_messages_to_send", 0x0426, "int8"],
  ["message_state", 0x0427, "int8"],
  ["ussd_service_op", 0x0501, "int8"],
];

export const TLV_TAGS: ReadonlyMap<string, number> = new Map(TLV_ROWS.map(([name, tag]) => [name, tag]));
export const TLV_TYPES: ReadonlyMap<number, TlvType> = new Map(TLV_ROWS.map(([, tag, type]) => [tag, type]));

/** The high bit of command_id marks a response (SMPP 3.4 5.1.2.1). */
export function isResponse(pdu: Pdu): boolean {
  return (pdu.command_id & 0x80000000) !== 0;
}

/** A request to send (numbered by the wire when written). */
export function request(command: string, fields: Record<string, FieldValue> = {}, tlvs: Tlv[] = []): Pdu {
  const spec = COMMANDS[command];
  if (!spec) throw new Error(`no SMPP command ${command}`);
  return { command, command_id: spec.id, command_status: 0, sequence_number: 0, fields, tlvs };
}

/**
 * The answer to a request: its resp with the same sequence_number, or generic_nack with
 * ESME_RINVCMDID (unless told otherwise) for a command_id SMPP does not define.
 */
export function responseTo(pdu: Pdu, command_status = 0, fields: Record<string, FieldValue> = {}): Pdu {
  const known = COMMAND_NAMES.has(pdu.command_id);
  const command = known ? `${pdu.command}_resp` : "generic_nack";
  return {
    command,
    command_id: known ? (pdu.command_id | 0x80000000) >>> 0 : 0x80000000,
    command_status: known || command_status !== 0 ? command_status : ESME_RINVCMDID,
    sequence_number: pdu.sequence_number,
    fields,
    tlvs: [],
  };
}
const ESME_RINVCMDID = 0x03;

/** A mandatory field read as a string ("" when absent or not a string). */
export function stringField(pdu: Pdu, name: string): string {
  const value = pdu.fields[name];
  return typeof value === "string" ? value : "";
}

/** A mandatory field read as a number (0 when absent or not a number). */
export function numberField(pdu: Pdu, name: string): number {
  const value = pdu.fields[name];
  return typeof value === "number" ? value : 0;
}

/** The first TLV of a name, undefined when absent. */
export function tlvValue(pdu: Pdu, name: string): FieldValue | undefined {
  const tag = TLV_TAGS.get(name);
  return tag === undefined ? undefined : tlvOfTag(pdu, tag);
}

/** The value of the first TLV of a tag, undefined when absent. */
export function tlvOfTag(pdu: Pdu, tag: number): FieldValue | undefined {
  for (const tlv of pdu.tlvs) if (tlv.tag === tag) return tlv.value;
  return undefined;
}
