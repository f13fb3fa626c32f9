import type { IncomingMessage, ServerResponse } from "node:http";
import type { KeyScopes } from "../accounts/scopes.ts";
import type { SendDefaults } from "../accounts/send-defaults.ts";
import type { MessageEventType } from "../webhooks/events.ts";
import type { ErrorShape } from "./errors.ts";

/**
 * What a request carries from one handler to the next. Express keeps it in res.locals; the send
 * lane (send-lane.ts) gives node's response the same field, so one handler serves both.
 */
export interface Locals {
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

/**
 * A request as the shared handlers see it: node's, with what a route and a body reader add. An
 * Express request is one (it has all these fields), and so is node's own in the send lane.
 */
export type HttpRequest = IncomingMessage & {
  body?: unknown;
  originalUrl?: string;
  route?: { path?: unknown };
};

export type HttpResponse = ServerResponse & { locals: Locals };

export type Next = (err?: unknown) => void;

/** A handler that runs under Express and in the send lane alike: node's request and response only. */
export type Handler = (req: HttpRequest, res: HttpResponse, next: Next) => void | Promise<void>;

export type ErrorHandler = (err: unknown, req: HttpRequest, res: HttpResponse, next: Next) => void;

/** Answers body as JSON, with the headers Express's res.json writes (ETag is off app-wide). */
export function sendJson(res: HttpResponse, statusCode: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = statusCode;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(text);
}
