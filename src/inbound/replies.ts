import { type Pool, withTransaction } from "../db/pool.ts";
import { type EventType, MESSAGE_EVENT_TYPES } from "../events/events.ts";
import { InsufficientBalanceError } from "../ledger/ledger.ts";
import type { Queue } from "../queue/boss.ts";
import { prepareSend } from "../sending/prepare-send.ts";
import { recordSends, UnapprovedSenderError } from "../sending/record-send.ts";
import { type KeywordKind, replyTooLong } from "./keywords.ts";

/**
 * Keyword replies: the text an account configured for a keyword's kind, sent from the number the
 * handset wrote to, to the handset, as a send of the account (priced, held, dispatched and
 * called back like any). The inbound message says a reply is pending from the transaction that
 * stored it; the reply's own transaction marks it sent, so a reply is sent once whichever
 * process gets to it, and one left pending by a process that died is sent by the sweep. A reply
 * to a number on the account's opt-out list (a HELP after a STOP) is written like any send to it,
 * failed OPTED_OUT at no charge, and the inbound message says `opted_out`, not `sent`.
 */
export type ReplyOutcome = "sent" | "opted_out" | "not_sent" | "none";

class ReplyRefused extends Error {}

interface Pending {
  account_id: string;
  from: string;
  to: string;
  keyword_kind: KeywordKind;
  currency: string;
  webhook_url: string | null;
  webhook_events: EventType[] | null;
  reply_text: string | null;
}

export async function sendKeywordReply(
  deps: { pool: Pool; boss: Queue; dispatchBatchSize: number; maxSegments: number },
  inboundId: string,
): Promise<ReplyOutcome> {
  try {
    return await withTransaction(deps.pool, async (tx) => {
      const { rows } = await tx.query<Pending>(
        `SELECT i.account_id, i."from", i."to", i.keyword_kind, a.currency, w.url AS webhook_url,
                w.events AS webhook_events,
                CASE i.keyword_kind WHEN 'opt_out' THEN k.opt_out_reply WHEN 'opt_in' THEN k.opt_in_reply
                                    ELSE k.help_reply END AS reply_text
           FROM inbound_messages i
           JOIN accounts a ON a.id = i.account_id
           LEFT JOIN account_webhooks w ON w.account_id = i.account_id
           LEFT JOIN inbound_keywords k ON k.account_id = i.account_id
          WHERE i.id = $1 AND i.reply = 'pending'
          FOR UPDATE OF i SKIP LOCKED`,
        [inboundId],
      );
      const pending = rows[0];
      if (!pending) return "none";
      // The reply was taken off the account's settings since the message came.
      if (!pending.reply_text) throw new ReplyRefused();
      // Set before replies were checked when set: never sent as more segments than a send may have.
      if (replyTooLong(pending.keyword_kind, pending.reply_text, deps.maxSegments)) throw new ReplyRefused();
      const send = prepareSend({
        accountId: pending.account_id,
        currency: pending.currency,
        from: pending.to,
        body: pending.reply_text,
        recipients: [pending.from],
        webhookUrl: null,
        webhookEvents: null,
        bulk: false,
      });
      await tx.query("UPDATE inbound_messages SET reply = 'sent', reply_message_id = $2 WHERE id = $1", [
        inboundId,
        send.messages[0]?.id,
      ]);
      const { refused, optedOut } = await recordSends(
        tx,
        deps.boss,
        pending.account_id,
        [
          {
            send,
            accountWebhookEvents: pending.webhook_url ? (pending.webhook_events ?? MESSAGE_EVENT_TYPES) : [],
            // The number asked not to be sent to by that very message: the confirmation goes all the same.
            ignoresOptOuts: pending.keyword_kind === "opt_out",
          },
        ],
        { dispatchBatchSize: deps.dispatchBatchSize },
      );
      // The number written to is no longer the account's, so it cannot send from it.
      if (refused.size > 0) throw new UnapprovedSenderError();
      if (optedOut.size === 0) return "sent";
      await tx.query("UPDATE inbound_messages SET reply = 'opted_out' WHERE id = $1", [inboundId]);
      return "opted_out";
    });
  } catch (err) {
    if (
      !(
        err instanceof ReplyRefused ||
        err instanceof UnapprovedSenderError ||
        err instanceof InsufficientBalanceError
      )
    )
      throw err;
    await deps.pool.query(
      "UPDATE inbound_messages SET reply = 'not_sent' WHERE id = $1 AND reply = 'pending'",
      [inboundId],
    );
    return "not_sent";
  }
}

/** Inbound messages whose reply has been pending longer than `olderThanSeconds` (their process died). */
export async function pendingReplies(
  pool: Pool,
  options: { olderThanSeconds: number; limit: number },
): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM inbound_messages
      WHERE reply = 'pending' AND created_at < now() - make_interval(secs => $1)
      ORDER BY created_at LIMIT $2`,
    [options.olderThanSeconds, options.limit],
  );
  return rows.map((r) => r.id);
}
