import type { RequestHandler } from "express";
import { z } from "zod";
import { listSenderIds } from "../../accounts/sender-ids.ts";
import { balanceNow } from "../../lifecycle/open-mark.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { amount, kitEnvelope } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";

/** Extensions beyond the contract, in the Kit conventions: the balance and the sender ids. */
export function getBalance(deps: IntakeDeps): RequestHandler {
  return async (_req, res) => {
    const balance = await balanceNow(deps.pool, res.locals.accountId);
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

export const balanceSchema = z
  .object({
    currency: z.string(),
    available: amount().meta({ description: "What new sends can spend, ten-thousandths." }),
    held: amount().meta({ description: "Held for messages not yet accepted or failed by a carrier." }),
  })
  .meta({ id: "Balance" });

export const senderIdSchema = z
  .object({
    address: z.string().meta({ description: "The sender id, as `from` takes it." }),
    verification_status: z
      .enum(["verified", "pending", "rejected"])
      .meta({ description: "verified marks a usable sender id." }),
  })
  .meta({ id: "SenderId" });

export const getBalanceEndpoint = endpoint({
  method: "get",
  path: "/api/v1/balance",
  operationId: "getBalance",
  summary: "The prepaid balance",
  tag: "Account",
  origin: "extension",
  errors: "kit",
  responses: { 200: { description: "The balance.", body: kitEnvelope(balanceSchema, "request successful") } },
  failures: ["notFound"],
});

export const getSenderIdsEndpoint = endpoint({
  method: "get",
  path: "/api/v1/sender-ids",
  operationId: "listSenderIds",
  summary: "The account's sender ids",
  tag: "Account",
  origin: "extension",
  errors: "kit",
  responses: {
    200: { description: "The sender ids.", body: kitEnvelope(z.array(senderIdSchema), "request successful") },
  },
  failures: [],
});
