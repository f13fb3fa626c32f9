/**
 * The pace of the session's warnings about PDUs it refuses as unsupported (src/smpp/refused-pdus.ts):
 * every refusal counted, the first of a command logged at once, then at most one line a minute per
 * command with how many were refused since the previous line. Time is a fake clock.
 */
import { describe, expect, it } from "vitest";
import { STATUS } from "../../src/smpp/command-status.ts";
import { type Pdu, responseTo } from "../../src/smpp/pdu.ts";
import { RefusedPdus } from "../../src/smpp/refused-pdus.ts";

const requestOf = (command: string, command_id: number, sequence_number: number): Pdu => ({
  command,
  command_id,
  command_status: 0,
  sequence_number,
  fields: {},
  tlvs: [],
});
const dataSm = (seq: number) => requestOf("data_sm", 0x103, seq);

function refusals() {
  const lines: { obj: Record<string, unknown>; msg: string }[] = [];
  const counted: string[] = [];
  let now = 1_000_000;
  const at = (level: string) => (obj: object, msg: string) =>
    void lines.push({ obj: { level, ...obj }, msg });
  const refused = new RefusedPdus(
    { info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug") },
    (command) => counted.push(command),
    60_000,
    () => now,
  );
  const refuse = (pdu: Pdu) => refused.note(pdu, responseTo(pdu, STATUS.ESME_RINVCMDID));
  const advance = (ms: number) => {
    now += ms;
  };
  return { refused, refuse, lines, counted, advance };
}

describe("RefusedPdus", () => {
  it("warns at the first refusal, naming the command and what was answered", () => {
    const { refuse, lines, counted } = refusals();

    refuse(dataSm(7));

    expect(counted).toEqual(["data_sm"]);
    expect(lines).toEqual([
      {
        msg: "unsupported PDU refused",
        obj: {
          level: "warn",
          command: "data_sm",
          command_id: "0x00000103",
          sequence_number: 7,
          answered: "data_sm_resp ESME_RINVCMDID (0x00000003)",
          refused_since_last_line: 1,
        },
      },
    ]);
  });

  it("writes at most a line a minute per command, with the count since the last line", () => {
    const { refuse, lines, counted, advance } = refusals();

    for (let i = 1; i <= 1000; i++) {
      refuse(dataSm(i));
      advance(100); // 1000 refusals over 100 s
    }

    expect(counted).toHaveLength(1000);
    // At 0 s (the first) and at 60 s (the 601st, reporting 600: the 2nd to the 601st).
    expect(lines.map((l) => [l.obj.sequence_number, l.obj.refused_since_last_line])).toEqual([
      [1, 1],
      [601, 600],
    ]);
    advance(60_000);
    refuse(dataSm(1001));
    expect(lines.at(-1)?.obj).toMatchObject({ sequence_number: 1001, refused_since_last_line: 400 });
  });

  it("paces each command on its own, and says when nothing was answered", () => {
    const { refused, refuse, lines } = refusals();

    refuse(dataSm(1));
    refuse(dataSm(2));
    refuse(requestOf("query_sm", 0x03, 3));
    refuse(requestOf("unknown", 0x777, 4));
    refused.note(requestOf("alert_notification", 0x102, 5), null);

    expect(lines.map((l) => [l.obj.command, l.obj.answered])).toEqual([
      ["data_sm", "data_sm_resp ESME_RINVCMDID (0x00000003)"],
      ["query_sm", "query_sm_resp ESME_RINVCMDID (0x00000003)"],
      ["unknown", "generic_nack ESME_RINVCMDID (0x00000003)"],
      ["alert_notification", "nothing (SMPP defines no response)"],
    ]);
  });
});
