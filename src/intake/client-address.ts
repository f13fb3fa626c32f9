import type { Request } from "express";
import { addressMatcher } from "../accounts/scopes.ts";

/**
 * The address a request came from, as a key's allowed_ips and the failed-authentication limit
 * judge it: the socket's peer, or, when the peer is one of TRUSTED_PROXIES (the load balancers in
 * front of the API), the address the proxies put in X-Forwarded-For. Each proxy appends the
 * address it took the request from, so the header is read from its end: the first address that is
 * not a trusted proxy is the client. Whatever stands to its left came from the client itself and
 * is never believed. With no trusted proxy the header is not read at all.
 */
export function clientAddressOf(trustedProxies: readonly string[]): (req: Request) => string {
  const trusted = addressMatcher(trustedProxies);
  if (trusted === null) return (req) => req.socket.remoteAddress ?? "";
  return (req) => {
    let address = req.socket.remoteAddress ?? "";
    // Node joins repeated X-Forwarded-For headers with ", ", in the order they came.
    const header = req.headers["x-forwarded-for"];
    const hops = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",");
    for (let i = hops.length - 1; i >= 0 && trusted(address); i--) {
      const hop = hops[i]?.trim() ?? "";
      if (hop !== "") address = hop;
    }
    return address;
  };
}
