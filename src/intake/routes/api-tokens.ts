import type { RequestHandler } from "express";
import { z } from "zod";
import { createApiKey, listApiKeys, revokeApiKey } from "../../accounts/api-keys.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { parseBody, textField, UUID_PATTERN } from "../validation.ts";

/** The API key endpoints; all in the Kit conventions. */
export const createKeyBody = z.object({ name: textField(100) }).strict();

export function createToken(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const { name } = parseBody(createKeyBody, req.body);
    const key = await createApiKey(deps.pool, res.locals.accountId, name.trim());
    res.status(201).json({
      status: "success",
      message: "api token created: save the token now, it is returned only once",
      data: key,
    });
  };
}

export function listTokens(deps: IntakeDeps): RequestHandler {
  return async (_req, res) => {
    const keys = await listApiKeys(deps.pool, res.locals.accountId);
    res.status(200).json({ status: "success", message: "", data: keys });
  };
}

export function revokeToken(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const id = String(req.params.id);
    if (!UUID_PATTERN.test(id)) throw new ApiError("invalidTokenId");
    if (!(await revokeApiKey(deps.pool, res.locals.accountId, id))) throw new ApiError("notFound");
    res.status(200).json({ status: "success", message: "api token revoked" });
  };
}
