import http from "node:http";
import type { Socket } from "node:net";
import type express from "express";

/**
 * The HTTP server's options for an Express app: its request and response objects are born with
 * the app's prototypes. Express otherwise changes each object's prototype as it takes the request
 * (application.js `handle`), and an object whose prototype changes after it was made sends V8's
 * inline caches in node's own http code (setHeader, writeHead, end) to their slow path on every
 * answer. With the prototype already in place, Express's `setPrototypeOf` changes nothing.
 * node's http classes are plain functions, so a constructor of ours can run them on its object.
 * The figure that settled it: docs/decisions/0007-one-http-stack.md.
 */
export function serverOptionsFor(app: express.Express): http.ServerOptions {
  function Request(this: http.IncomingMessage, socket: Socket): void {
    Reflect.apply(http.IncomingMessage, this, [socket]);
  }
  Request.prototype = app.request;
  function Response(this: http.ServerResponse, req: http.IncomingMessage, options?: object): void {
    Reflect.apply(http.ServerResponse, this, [req, options]);
  }
  Response.prototype = app.response;
  return {
    IncomingMessage: Request as unknown as typeof http.IncomingMessage,
    ServerResponse: Response as unknown as typeof http.ServerResponse,
  };
}
