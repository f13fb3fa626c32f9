import { type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "../logger.ts";
import { ERRORS, type ErrorName, errorBody } from "./errors.ts";

/** Node's parser codes that have an answer of their own; any other is a malformed request. */
const ANSWERS: Readonly<Record<string, ErrorName>> = {
  HPE_HEADER_OVERFLOW: "headersTooLarge",
  ERR_HTTP_REQUEST_TIMEOUT: "requestTimeout",
};

/**
 * The server's 'clientError' listener: what Node's HTTP parser refuses before Express sees it (a
 * request line or header it cannot read, headers over its 16 KiB, a request not received in time)
 * is answered in the Kit shape like every other error, where Node would answer an empty body. The
 * connection is closed after it, as Node closes it. There is no request object, so the answer is
 * written to the socket: on a keep-alive connection, once the answer to the request before it is
 * written, so that the answers keep the requests' order.
 */
export function answerClientError(logger: Logger): (err: Error & { code?: string }, socket: Duplex) => void {
  return (err, socket) => {
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const name = ANSWERS[err.code ?? ""] ?? "malformedRequest";
    const { status } = ERRORS[name];
    logger.info({ code: err.code, status }, "request refused by the HTTP parser");
    const body = JSON.stringify(errorBody(name, "kit"));
    const answer = () =>
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        () => socket.destroy(),
      );
    // Node's own field: the response being written on this connection, if any.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (inFlight && !inFlight.writableFinished) inFlight.once("finish", answer);
    else answer();
  };
}
