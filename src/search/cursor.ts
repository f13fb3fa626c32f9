import { createHmac, timingSafeEqual } from "node:crypto";
import type { Queryable } from "../db/pool.ts";

/**
 * Search cursors: where the next page starts (the last row's created_at and id), signed with
 * HMAC-SHA256 over that position, the account and the query's filters. A cursor is only good for
 * the account and the filters it was issued for: changed by one bit, or used with another key's
 * account or other filters, it is refused. Positions carry microseconds as Postgres stores them.
 */
export interface Position {
  /** created_at in UTC, e.g. 2026-11-23T18:25:01.123456Z. */
  at: string;
  id: string;
}

const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const VERSION = "v1";

function mac(key: Buffer, scope: string, payload: string): Buffer {
  return createHmac("sha256", key).update(`${VERSION}\n${scope}\n${payload}`).digest();
}

/** scope: the account and the canonical filters the cursor belongs to. */
export function signCursor(key: Buffer, scope: string, position: Position): string {
  const payload = Buffer.from(JSON.stringify([position.at, position.id])).toString("base64url");
  return `${payload}.${mac(key, scope, payload).toString("base64url")}`;
}

/**
 * The position a cursor holds, or null when it was not issued for this scope by this key. A
 * position's id is a UUID unless the list is keyed by something else (idPattern).
 */
export function readCursor(
  key: Buffer,
  scope: string,
  cursor: string,
  idPattern: RegExp = ID,
): Position | null {
  const [payload, signature, ...rest] = cursor.split(".");
  if (!payload || !signature || rest.length > 0 || cursor.length > 200) return null;
  const given = Buffer.from(signature, "base64url");
  const expected = mac(key, scope, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return null;
  const [at, id] = parsed as unknown[];
  if (typeof at !== "string" || typeof id !== "string" || !AT.test(at) || !idPattern.test(id)) return null;
  return { at, id };
}

const keys = new WeakMap<object, Promise<Buffer>>();

/**
 * The signing key, from the database (migration 011) so that every API process shares it; read
 * once per pool. A failed read is not remembered.
 */
export function cursorKey(db: Queryable): Promise<Buffer> {
  let key = keys.get(db);
  if (!key) {
    key = db.query<{ secret: string }>("SELECT secret FROM search_cursor_key").then(({ rows }) => {
      const secret = rows[0]?.secret;
      if (!secret) throw new Error("search_cursor_key holds no key");
      return Buffer.from(secret, "utf8");
    });
    key.catch(() => keys.delete(db));
    keys.set(db, key);
  }
  return key;
}
