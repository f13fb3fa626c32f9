/**
 * The event vocabulary lives in src/events/events.ts, below every stage that records events. This
 * re-export only serves src/intake/handler.ts until that file goes (issue 29, one HTTP stack):
 * delete it then; nothing else may import it.
 */
export type { MessageEventType } from "../events/events.ts";
