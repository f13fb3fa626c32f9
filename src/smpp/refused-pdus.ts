/**
 * What the session does besides answering a request it refuses as unsupported (data_sm, query_sm,
 * a command_id SMPP does not define, …; docs/decisions/0008): it counts each one, and warns with
 * a pace, since a carrier that sends its receipts as data_sm sends thousands. The first refusal of
 * a command is logged at once, then at most one line per `everyMs` for that command, carrying how
 * many were refused since the previous line; the counter has the exact number.
 */
import { describeStatus } from "./command-status.ts";
import type { Pdu } from "./pdu.ts";
import type { SmppLogger } from "./session-types.ts";

export const REFUSAL_LINE_EVERY_MS = 60_000;

export class RefusedPdus {
  /** Per command: when its last line was written, and the refusals not yet in a line. */
  private readonly commands = new Map<string, { lineAt: number; unlogged: number }>();

  constructor(
    private readonly log: SmppLogger,
    private readonly onRefused: ((command: string) => void) | undefined,
    private readonly everyMs = REFUSAL_LINE_EVERY_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** One request refused: `answer` is what was sent back, null where SMPP defines no response. */
  note(request: Pdu, answer: Pdu | null): void {
    this.onRefused?.(request.command);
    const now = this.now();
    let seen = this.commands.get(request.command);
    if (!seen) {
      seen = { lineAt: -Infinity, unlogged: 0 };
      this.commands.set(request.command, seen);
    }
    seen.unlogged++;
    if (now - seen.lineAt < this.everyMs) return;
    this.log.warn(
      {
        command: request.command,
        command_id: `0x${request.command_id.toString(16).padStart(8, "0")}`,
        sequence_number: request.sequence_number,
        answered: answer
          ? `${answer.command} ${describeStatus(answer.command_status)}`
          : "nothing (SMPP defines no response)",
        refused_since_last_line: seen.unlogged,
      },
      "unsupported PDU refused",
    );
    seen.lineAt = now;
    seen.unlogged = 0;
  }
}
