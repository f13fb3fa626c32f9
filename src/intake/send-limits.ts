import { countSegments } from "../domain/segments.ts";
import type { FieldError } from "./errors.ts";

/** A body longer than the configured number of segments is refused before anything is priced. */
export function segmentLimitError(body: string, maxSegments: number): FieldError | null {
  const { segments } = countSegments(body);
  return segments > maxSegments
    ? { field: "message", description: `must fit in ${maxSegments} segments (it needs ${segments})` }
    : null;
}
