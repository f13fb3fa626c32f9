import type { RequestHandler } from "express";
import { listSenderIds } from "../../accounts/sender-ids.ts";
import { balanceOf } from "../../ledger/ledger.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";

/** Extensions beyond the contract, in the Kit conventions: the balance and the sender ids. */
export function getBalance(deps: IntakeDeps): RequestHandler {
  return async (_req, res) => {
    const balance = await balanceOf(deps.pool, res.locals.accountId);
    if (!balance) throw new ApiError("notFound");
    res.status(200).json({ status: "success", message: "request successful", data: balance });
  };
}

export function getSenderIds(deps: IntakeDeps): RequestHandler {
  return async (_req, res) => {
    const senderIds = await listSenderIds(deps.pool, res.locals.accountId);
    res.status(200).json({ status: "success", message: "request successful", data: senderIds });
  };
}
