import { countSegments } from "../domain/segments.ts";
import type { FieldError } from "./errors.ts";

/** A body longer than the configured number of segments is refused before anything is priced. */
export function segmentLimitError(body: string, maxSegments: number): FieldError | null {
  const { segments } = countSegments(body);
  return segments > maxSegments
    ? { field: "message", description: `must fit in ${maxSegments} segments (it needs ${segments})` }
    : null;
}

/** How far ahead a send may be scheduled. */
export const SEND_AT_MAX_DAYS = 30;

/**
 * A scheduled send's time must be in the future and at most SEND_AT_MAX_DAYS ahead. Checked when
 * the send is accepted — not when an Idempotency-Key replays it, whose original answer stands.
 */
export function sendAtError(sendAt: Date, now: number = Date.now()): FieldError | null {
  if (sendAt.getTime() <= now) return { field: "send_at", description: "must be in the future" };
  if (sendAt.getTime() > now + SEND_AT_MAX_DAYS * 86_400_000)
    return { field: "send_at", description: `must be at most ${SEND_AT_MAX_DAYS} days ahead` };
  return null;
}
