import type { KeyScopes } from "../accounts/scopes.ts";
import type { SendDefaults } from "../accounts/send-defaults.ts";
import type { MessageEventType } from "../events/events.ts";
import type { ErrorShape } from "./errors.ts";

/**
 * What a request carries from one handler to the next, in Express's res.locals. Declared on
 * Express's own Locals, so every handler (an Express RequestHandler) sees these fields typed.
 */
export interface RequestLocals {
  errorShape: ErrorShape;
  accountId: string;
  keyId: string;
  currency: string;
  /** The request's id, as logged and answered in X-Request-Id. */
  requestId: string;
  /** The event types the account webhook wants; none without one (see authenticate). */
  webhookEvents: readonly MessageEventType[];
  /** The account's defaults for its sends, read with the key (see authenticate). */
  sendDefaults: SendDefaults;
  /** The key's policy: what it may grant a key it makes, or revoke (see api-tokens.ts). */
  keyPolicy: { scopes: KeyScopes; allowedIps: readonly string[] | null; expiresAt: Date | null };
}

declare global {
  namespace Express {
    interface Locals extends RequestLocals {}
  }
}
