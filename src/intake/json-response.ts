import type { Response } from "express";

/**
 * Answers body as JSON with the headers Express's res.json writes (ETag is off app-wide), without
 * its trip through res.send's content-type, charset and freshness handling on every answer.
 */
export function sendJson(res: Response, statusCode: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = statusCode;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(text);
}
