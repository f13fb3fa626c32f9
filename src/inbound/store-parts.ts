import { createHash } from "node:crypto";
import type { Queryable } from "../db/pool.ts";
import { newMessageId } from "../domain/message-id.ts";
import { internationalForm, resolveOperator } from "../domain/numbers.ts";
import { recordAccountEvents } from "../events/events.ts";
import { decodeText, encodingOf, isKnownDataCoding } from "../smpp/data-coding.ts";
import type { DeliverSm } from "../smpp/session.ts";
import { type InboundMessage, toInboundView } from "./inbound-message.ts";
import { type KeywordRow, keywordOf, settingsOf } from "./keywords.ts";
import { addOptOuts, type OptOutChange, removeOptOuts } from "./opt-outs.ts";
import { type Concatenation, concatenationOf } from "./user-data.ts";

/**
 * Mobile-originated messages from their deliver_sm to their account, in one transaction per
 * batch: each PDU is kept as it came (mobile_originated), a PDU the SMSC sends again is kept
 * once, the parts of a concatenated message are joined once all are there (on any bind, in any
 * order, by any process), the message is routed to the account owning the address written to,
 * and a keyword in it changes the account's opt-out list. A part still waiting after the
 * reassembly timeout makes an incomplete message (assembleOverdue), never nothing.
 */

/** One deliver_sm that is not a receipt, as stored. */
export interface InboundPart {
  link: string;
  /** The sender's number's operator; "" when it is none of them. */
  operator: string;
  sourceAddr: string;
  sourceTon: number;
  sourceNpi: number;
  destinationAddr: string;
  /** The destination's type of number: 2 (national) makes nine digits a Zimbabwean number. */
  destinationTon: number;
  esmClass: number;
  dataCoding: number;
  /** This part's text alone (what mobile_originated.body shows). */
  body: string;
  /** The UDH's information elements, concatenated, when there was a UDH. */
  udh: Buffer | null;
  /** The user data's octets after the UDH. */
  userData: Buffer;
  concat: Concatenation | null;
  /** What makes a PDU the same PDU again: every field the SMSC repeats, nothing it renumbers. */
  fingerprint: Buffer;
}

// Postgres text cannot hold NUL; an IA5, Latin-1 or UCS-2 text may (the octets keep it).
const withoutNul = (text: string) => (text.includes("\u0000") ? text.replaceAll("\u0000", "") : text);

export function partOf(link: string, pdu: DeliverSm): InboundPart {
  const userData = pdu.user_data ?? Buffer.alloc(0);
  const udh = pdu.udh.length > 0 ? Buffer.concat(pdu.udh) : null;
  const concat = concatenationOf(pdu.udh, pdu.tlvs);
  const fingerprint = createHash("sha256");
  for (const field of [
    link,
    pdu.source_addr,
    pdu.destination_addr,
    String(pdu.esm_class),
    String(pdu.data_coding),
  ])
    fingerprint.update(`${field.length}:${field};`);
  fingerprint.update(`${udh?.length ?? -1}:`).update(udh ?? Buffer.alloc(0));
  const { sar_msg_ref_num, sar_total_segments, sar_segment_seqnum } = pdu.tlvs;
  fingerprint.update(`;${sar_msg_ref_num ?? ""},${sar_total_segments ?? ""},${sar_segment_seqnum ?? ""};`);
  fingerprint.update(userData);
  return {
    link,
    operator: resolveOperator(pdu.source_addr) ?? "",
    sourceAddr: pdu.source_addr,
    sourceTon: pdu.source_addr_ton,
    sourceNpi: pdu.source_addr_npi,
    destinationAddr: pdu.destination_addr,
    destinationTon: pdu.dest_addr_ton,
    esmClass: pdu.esm_class,
    dataCoding: pdu.data_coding,
    body: withoutNul(decodeText(userData, encodingOf(pdu.data_coding))),
    udh,
    userData,
    concat,
    fingerprint: fingerprint.digest(),
  };
}

/** The parts of one concatenated message: same link, sender, address written to, reference and count. */
interface GroupKey {
  link: string;
  sourceAddr: string;
  destinationAddr: string;
  ref: number;
  total: number;
}

const groupId = (g: GroupKey) =>
  `${g.link}\u0000${g.sourceAddr}\u0000${g.destinationAddr}\u0000${g.ref}\u0000${g.total}`;

/** The advisory lock class of inbound work; any constant, the same in every process. */
const INBOUND_LOCK_CLASS = 7_426_026;

/** A 32-bit lock key: two processes that could join or repeat the same parts take the same one. */
function lockKey(of: string | Buffer): number {
  return createHash("sha256").update(of).digest().readInt32BE(0);
}

/**
 * Serialises the work of every process on these parts' messages: without it, two parts of one
 * message stored at once by two processes would each not see the other and both wait until the
 * timeout, and a PDU repeated on another bind could be stored twice. Keys in one order, so two
 * batches never wait for each other crosswise.
 */
async function lock(tx: Queryable, keys: Iterable<number>): Promise<void> {
  const sorted = [...new Set(keys)].sort((a, b) => a - b);
  if (sorted.length === 0) return;
  await tx.query("SELECT pg_advisory_xact_lock($1, k) FROM unnest($2::int[]) AS k", [
    INBOUND_LOCK_CLASS,
    sorted,
  ]);
}

/** A message made whole: from one part, or from the parts of a concatenated one. */
interface Whole {
  id: string;
  link: string;
  operator: string;
  sourceAddr: string;
  sourceTon: number;
  destinationAddr: string;
  /** Null for parts stored before migration 044 kept it. */
  destinationTon: number | null;
  dataCoding: number;
  octets: Buffer;
  parts: number;
  complete: boolean;
  receivedAt: Date;
  /** Waiting parts (mobile_originated ids) that this message takes. */
  partIds: string[];
}

export interface StoredBatch {
  stored: number;
  /** PDUs the SMSC sent again, not stored twice. */
  repeats: number;
  messages: InboundMessage[];
  /** Messages in a data_coding Shiri does not know (read as Latin-1). */
  unknownCodings: number;
  optOutChanges: OptOutChange[];
  /** Inbound messages whose keyword reply is to be sent. */
  replies: string[];
}

const groupOf = (p: InboundPart): GroupKey | null =>
  p.concat && { link: p.link, sourceAddr: p.sourceAddr, destinationAddr: p.destinationAddr, ...p.concat };

/** Two parts of one message: the same PDU, or two parts of one concatenated message. */
function sameMessage(a: InboundPart, b: InboundPart): boolean {
  if (a.fingerprint.equals(b.fingerprint)) return true;
  const ga = groupOf(a);
  const gb = groupOf(b);
  return ga !== null && gb !== null && groupId(ga) === groupId(gb);
}

/**
 * Which parts of a batch (in the order the link carried them) are the SMSC sending again a PDU
 * already taken: the same PDU stored within the window (`repeatable`, see storedRepeatable), or
 * earlier in the batch with nothing from its sender between them but parts of that same message.
 * A handset's STOP, START, STOP in one batch are three messages, however quickly they come.
 */
export function repeatsIn(parts: readonly InboundPart[], repeatable: ReadonlySet<string>): boolean[] {
  const bySender = new Map<string, InboundPart[]>();
  return parts.map((part) => {
    const earlier = bySender.get(part.sourceAddr) ?? [];
    let repeat: boolean | null = null;
    for (let i = earlier.length - 1; i >= 0 && repeat === null; i--) {
      const before = earlier[i] as InboundPart;
      if (before.fingerprint.equals(part.fingerprint)) repeat = true;
      else if (!sameMessage(before, part)) repeat = false;
    }
    earlier.push(part);
    bySender.set(part.sourceAddr, earlier);
    return repeat ?? repeatable.has(part.fingerprint.toString("hex"));
  });
}

/**
 * Of these fingerprints, those with a copy stored within `windowSeconds` that the PDU may repeat:
 * any, but an opt-out keyword whose number the account's list no longer holds (a START, or an
 * opt-in through the API, since the STOP: a STOP now is the customer's again, not the SMSC's
 * repeat). An opt-in keyword's copy is repeated whatever the list says: where a START is either a
 * resend or the customer's, the number stays out. Whatever else came from the sender since does
 * not matter: an SMSC with several PDUs unanswered resends them all, in order, after the ones that
 * followed them.
 */
async function storedRepeatable(
  tx: Queryable,
  fingerprints: readonly Buffer[],
  windowSeconds: number,
): Promise<Set<string>> {
  const { rows } = await tx.query<{ fingerprint: Buffer }>(
    `SELECT prev.fingerprint
       FROM unnest($1::bytea[]) AS f(fingerprint)
       CROSS JOIN LATERAL (
         SELECT mo.id, mo.link, mo.source_addr, mo.destination_addr, mo.concat_ref, mo.concat_total,
                mo.fingerprint, mo.inbound_message_id
           FROM mobile_originated mo
          WHERE mo.fingerprint = f.fingerprint AND mo.received_at > now() - make_interval(secs => $2)
          ORDER BY mo.received_at DESC, mo.id DESC LIMIT 1) prev
      WHERE NOT EXISTS (
              SELECT 1 FROM inbound_messages m
               WHERE m.id = prev.inbound_message_id AND m.account_id IS NOT NULL
                 AND m.keyword_kind = 'opt_out'
                 AND NOT EXISTS (
                       SELECT 1 FROM opt_outs o WHERE o.account_id = m.account_id AND o.number = m."from"))`,
    [fingerprints, windowSeconds],
  );
  return new Set(rows.map((r) => r.fingerprint.toString("hex")));
}

/**
 * Stores a batch of parts in `tx`. A part the same as one stored within `repeatWindowSeconds`,
 * with nothing else from its sender in between and the opt-out list as it left it, is the SMSC
 * sending it again (its answer lost) and is not stored a second time (repeatsIn).
 */
export async function storeParts(
  tx: Queryable,
  parts: readonly InboundPart[],
  options: { repeatWindowSeconds: number },
): Promise<StoredBatch> {
  if (parts.some((p) => p.link !== parts[0]?.link)) throw new Error("storeParts takes the parts of one link");
  await lock(
    tx,
    parts.map((p) => {
      const group = groupOf(p);
      return lockKey(group ? groupId(group) : p.fingerprint);
    }),
  );
  const fingerprints = new Map(parts.map((p) => [p.fingerprint.toString("hex"), p.fingerprint]));
  const repeatable = await storedRepeatable(tx, [...fingerprints.values()], options.repeatWindowSeconds);
  const repeats = repeatsIn(parts, repeatable);
  const fresh = parts.filter((_, i) => !repeats[i]);
  if (fresh.length === 0) return { ...(await finish(tx, [])), stored: 0, repeats: parts.length };
  // A single part's message id is known before it is stored: its row names it at once.
  const now = Date.now();
  const singleIds = fresh.map((p) => (p.concat ? null : newMessageId(now)));
  const { rows: inserted } = await tx.query<{ received_at: Date }>(
    `INSERT INTO mobile_originated (link, operator, source_addr, source_addr_ton, source_addr_npi,
                                    destination_addr, esm_class, data_coding, body, udh, user_data,
                                    concat_ref, concat_total, concat_seq, fingerprint, inbound_message_id,
                                    dest_addr_ton)
     SELECT $1, operator, source_addr, source_addr_ton, source_addr_npi, destination_addr, esm_class,
            data_coding, body, udh, user_data, concat_ref, concat_total, concat_seq, fingerprint,
            inbound_message_id, dest_addr_ton
       FROM unnest($2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::int[], $8::int[],
                   $9::text[], $10::bytea[], $11::bytea[], $12::int[], $13::int[], $14::int[],
                   $15::bytea[], $16::uuid[], $17::int[]) WITH ORDINALITY
         AS p(operator, source_addr, source_addr_ton, source_addr_npi, destination_addr, esm_class,
              data_coding, body, udh, user_data, concat_ref, concat_total, concat_seq, fingerprint,
              inbound_message_id, dest_addr_ton, ord)
      ORDER BY ord
     RETURNING received_at`,
    [
      parts[0]?.link ?? "",
      fresh.map((p) => p.operator),
      fresh.map((p) => p.sourceAddr),
      fresh.map((p) => p.sourceTon),
      fresh.map((p) => p.sourceNpi),
      fresh.map((p) => p.destinationAddr),
      fresh.map((p) => p.esmClass),
      fresh.map((p) => p.dataCoding),
      fresh.map((p) => p.body),
      fresh.map((p) => p.udh),
      fresh.map((p) => p.userData),
      fresh.map((p) => p.concat?.ref ?? null),
      fresh.map((p) => p.concat?.total ?? null),
      fresh.map((p) => p.concat?.seq ?? null),
      fresh.map((p) => p.fingerprint),
      singleIds,
      fresh.map((p) => p.destinationTon),
    ],
  );
  // Every row of one transaction has its start as received_at.
  const receivedAt = (inserted[0] as { received_at: Date }).received_at;
  const wholes: Whole[] = [];
  const groups = new Map<string, GroupKey>();
  fresh.forEach((p, i) => {
    const group = groupOf(p);
    if (group) groups.set(groupId(group), group);
    else
      wholes.push({
        ...p,
        id: singleIds[i] as string,
        octets: p.userData,
        parts: 1,
        complete: true,
        receivedAt,
        partIds: [],
      });
  });
  for (const whole of await joinWaiting(tx, [...groups.values()], { evenIfIncomplete: false }))
    wholes.push(whole);
  const made = await finish(tx, wholes);
  return { ...made, stored: inserted.length, repeats: parts.length - inserted.length };
}

interface WaitingRow {
  id: string;
  link: string;
  operator: string;
  source_addr: string;
  source_addr_ton: number;
  destination_addr: string;
  dest_addr_ton: number | null;
  concat_ref: number;
  concat_total: number;
  concat_seq: number;
  data_coding: number;
  user_data: Buffer | null;
  received_at: Date;
}

/**
 * The messages that the waiting parts of these groups make: those with every part (or, with
 * evenIfIncomplete, whatever parts came), in part order. A part number that came twice with
 * different octets (not a repeat: the same PDU is not stored twice) counts once, its first.
 */
async function joinWaiting(
  tx: Queryable,
  groups: readonly GroupKey[],
  options: { evenIfIncomplete: boolean },
): Promise<Whole[]> {
  if (groups.length === 0) return [];
  const { rows } = await tx.query<WaitingRow>(
    `SELECT mo.id::text, mo.link, mo.operator, mo.source_addr, mo.source_addr_ton, mo.destination_addr,
            mo.dest_addr_ton, mo.concat_ref, mo.concat_total, mo.concat_seq, mo.data_coding, mo.user_data, mo.received_at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[])
            AS g(link, source_addr, destination_addr, ref, total)
       JOIN mobile_originated mo
         ON mo.link = g.link AND mo.source_addr = g.source_addr AND mo.destination_addr = g.destination_addr
        AND mo.concat_ref = g.ref AND mo.concat_total = g.total
      WHERE mo.inbound_message_id IS NULL AND mo.concat_total IS NOT NULL
      ORDER BY mo.id`,
    [
      groups.map((g) => g.link),
      groups.map((g) => g.sourceAddr),
      groups.map((g) => g.destinationAddr),
      groups.map((g) => g.ref),
      groups.map((g) => g.total),
    ],
  );
  const byGroup = new Map<string, WaitingRow[]>();
  for (const row of rows) {
    const id = groupId({
      link: row.link,
      sourceAddr: row.source_addr,
      destinationAddr: row.destination_addr,
      ref: row.concat_ref,
      total: row.concat_total,
    });
    const list = byGroup.get(id) ?? [];
    list.push(row);
    byGroup.set(id, list);
  }
  const wholes: Whole[] = [];
  for (const list of byGroup.values()) {
    const bySeq = new Map<number, WaitingRow>();
    for (const row of list) if (!bySeq.has(row.concat_seq)) bySeq.set(row.concat_seq, row);
    const first = list[0] as WaitingRow;
    const complete = bySeq.size === first.concat_total;
    if (!complete && !options.evenIfIncomplete) continue;
    const ordered = [...bySeq.entries()].sort(([a], [b]) => a - b).map(([, row]) => row);
    wholes.push({
      id: newMessageId(Date.now()),
      link: first.link,
      operator: first.operator,
      sourceAddr: first.source_addr,
      sourceTon: first.source_addr_ton,
      destinationAddr: first.destination_addr,
      destinationTon: first.dest_addr_ton,
      dataCoding: (ordered[0] as WaitingRow).data_coding,
      octets: Buffer.concat(ordered.map((row) => row.user_data ?? Buffer.alloc(0))),
      parts: ordered.length,
      complete,
      receivedAt: new Date(Math.min(...list.map((row) => row.received_at.getTime()))),
      partIds: list.map((row) => row.id),
    });
  }
  return wholes;
}

/**
 * Makes the wholes inbound messages: routed to the account owning the address written to (or
 * none), keywords read against that account's lists, the parts pointed at their message, the
 * opt-out changes made, the message.received and contact events recorded.
 */
async function finish(
  tx: Queryable,
  wholes: readonly Whole[],
): Promise<Omit<StoredBatch, "stored" | "repeats">> {
  const empty = { messages: [], unknownCodings: 0, optOutChanges: [], replies: [] };
  if (wholes.length === 0) return empty;
  // The address written to, in the form inbound_numbers keeps (nine digits marked national too).
  const toOf = (w: Whole) => internationalForm(w.destinationAddr, w.destinationTon ?? undefined);
  const destinations = [...new Set(wholes.map(toOf))];
  const { rows: owners } = await tx.query<KeywordRow & { number: string; account_id: string }>(
    `SELECT n.number, n.account_id, k.opt_out, k.opt_in, k.help, k.opt_out_reply, k.opt_in_reply, k.help_reply
       FROM inbound_numbers n LEFT JOIN inbound_keywords k ON k.account_id = n.account_id
      WHERE n.number = ANY ($1::text[])`,
    [destinations],
  );
  const ownerOf = new Map(
    owners.map((o) => [o.number, { accountId: o.account_id, settings: settingsOf(o) }]),
  );
  let unknownCodings = 0;
  const messages = wholes.map((w): InboundMessage => {
    const to = toOf(w);
    const owner = ownerOf.get(to);
    const encoding = encodingOf(w.dataCoding);
    if (!isKnownDataCoding(w.dataCoding)) unknownCodings++;
    const body = withoutNul(decodeText(w.octets, encoding));
    const keyword = owner && w.complete ? keywordOf(body, owner.settings.lists) : null;
    return {
      id: w.id,
      accountId: owner?.accountId ?? null,
      link: w.link,
      operator: w.operator,
      from: internationalForm(w.sourceAddr, w.sourceTon),
      to,
      body,
      encoding,
      parts: w.parts,
      complete: w.complete,
      keyword: keyword?.keyword ?? null,
      keywordKind: keyword?.kind ?? null,
      reply: keyword && owner?.settings.replies[keyword.kind] ? "pending" : null,
      receivedAt: w.receivedAt,
    };
  });
  await tx.query(
    `INSERT INTO inbound_messages (id, account_id, link, operator, "from", "to", body, encoding, parts, complete,
                                   keyword, keyword_kind, reply, received_at)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                          $8::text[], $9::int[], $10::boolean[], $11::text[], $12::text[], $13::text[],
                          $14::timestamptz[])`,
    [
      messages.map((m) => m.id),
      messages.map((m) => m.accountId),
      messages.map((m) => m.link),
      messages.map((m) => m.operator),
      messages.map((m) => m.from),
      messages.map((m) => m.to),
      messages.map((m) => m.body),
      messages.map((m) => m.encoding),
      messages.map((m) => m.parts),
      messages.map((m) => m.complete),
      messages.map((m) => m.keyword),
      messages.map((m) => m.keywordKind),
      messages.map((m) => m.reply),
      messages.map((m) => m.receivedAt),
    ],
  );
  const taken = wholes.flatMap((w) => w.partIds.map((partId) => ({ partId, messageId: w.id })));
  if (taken.length > 0)
    await tx.query(
      `UPDATE mobile_originated mo SET inbound_message_id = x.message_id
         FROM unnest($1::bigint[], $2::uuid[]) AS x(id, message_id) WHERE mo.id = x.id`,
      [taken.map((t) => t.partId), taken.map((t) => t.messageId)],
    );
  const routed = messages.filter((m) => m.accountId !== null);
  await recordAccountEvents(
    tx,
    routed.map((m) => ({
      accountId: m.accountId as string,
      type: "message.received" as const,
      subjectId: m.id,
      data: toInboundView(m),
    })),
  );
  return {
    messages,
    unknownCodings,
    optOutChanges: await applyKeywords(tx, routed),
    replies: messages.filter((m) => m.reply === "pending").map((m) => m.id),
  };
}

/**
 * The opt-out list changes the messages' keywords ask for, the last one of a number winning
 * when it sent several: STOP then START in one batch leaves it off the list.
 */
async function applyKeywords(tx: Queryable, messages: readonly InboundMessage[]): Promise<OptOutChange[]> {
  const last = new Map<string, InboundMessage>();
  for (const m of messages)
    if (m.keywordKind === "opt_out" || m.keywordKind === "opt_in") last.set(`${m.accountId}|${m.from}`, m);
  if (last.size === 0) return [];
  const request = (m: InboundMessage) => ({
    accountId: m.accountId as string,
    number: m.from,
    reason: "keyword" as const,
    keyword: m.keyword,
    inboundMessageId: m.id,
  });
  const outs = [...last.values()].filter((m) => m.keywordKind === "opt_out").map(request);
  const ins = [...last.values()].filter((m) => m.keywordKind === "opt_in").map(request);
  return [...(await addOptOuts(tx, outs)), ...(await removeOptOuts(tx, ins))];
}

/**
 * Messages whose parts have waited longer than `olderThanSeconds` for the rest: each made an
 * incomplete message of the parts that came. At most `limit` messages a pass; safe from several
 * processes at once (the same locks as storeParts).
 */
export async function assembleOverdue(
  tx: Queryable,
  options: { olderThanSeconds: number; limit: number },
): Promise<Omit<StoredBatch, "stored" | "repeats">> {
  const { rows } = await tx.query<{
    link: string;
    source_addr: string;
    destination_addr: string;
    concat_ref: number;
    concat_total: number;
  }>(
    `SELECT DISTINCT link, source_addr, destination_addr, concat_ref, concat_total FROM (
       SELECT link, source_addr, destination_addr, concat_ref, concat_total FROM mobile_originated
        WHERE inbound_message_id IS NULL AND concat_total IS NOT NULL
          AND received_at < now() - make_interval(secs => $1)
        ORDER BY received_at LIMIT $2) overdue`,
    [options.olderThanSeconds, options.limit],
  );
  const groups = rows.map((r) => ({
    link: r.link,
    sourceAddr: r.source_addr,
    destinationAddr: r.destination_addr,
    ref: r.concat_ref,
    total: r.concat_total,
  }));
  if (groups.length === 0) return { messages: [], unknownCodings: 0, optOutChanges: [], replies: [] };
  await lock(
    tx,
    groups.map((g) => lockKey(groupId(g))),
  );
  // Read again under the locks: a part stored meanwhile may have completed a group.
  return finish(tx, await joinWaiting(tx, groups, { evenIfIncomplete: true }));
}
