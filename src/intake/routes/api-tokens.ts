import type { RequestHandler } from "express";
import { z } from "zod";
import { createApiKey, listApiKeys, revokeApiKey } from "../../accounts/api-keys.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { kitDone, kitEnvelope, timestamp } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { parseBody, textField, UUID_PATTERN } from "../validation.ts";

/** The API key endpoints; all in the Kit conventions. */
export const createKeyBody = z.object({ name: textField(100) }).strict();

const CREATED = "api token created: save the token now, it is returned only once";
const REVOKED = "api token revoked";

export function createToken(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const { name } = parseBody(createKeyBody, req.body);
    const key = await createApiKey(deps.pool, res.locals.accountId, name.trim());
    res.status(201).json({
      status: "success",
      message: CREATED,
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
    res.status(200).json({ status: "success", message: REVOKED });
  };
}

export const apiKeySchema = z
  .object({
    id: z.uuid().meta({ description: "Used to revoke the key." }),
    name: z.string(),
    token: z
      .string()
      .meta({ description: "The key secret: returned only here, only a SHA-256 hash is kept." }),
    account_id: z.uuid(),
    created_at: timestamp(),
  })
  .meta({ id: "ApiKey", description: "An API key as returned on creation." });

export const apiKeyRecordSchema = z
  .object({
    ID: z.uuid().meta({ description: "Key id; used in the revoke path." }),
    CreatedAt: timestamp(),
    UpdatedAt: timestamp().nullable().meta({ description: "Unstable: not to be relied on." }),
    DeletedAt: timestamp().nullable().meta({ description: "Unstable: not to be relied on." }),
    Name: z.string(),
    TokenHash: z.string().meta({ description: "SHA-256 of the key. Internal: not to be built against." }),
    AccountId: z.uuid().meta({ description: "Unstable: not to be relied on." }),
    Active: z.boolean().meta({ description: "false once revoked." }),
    LastUsedAt: timestamp()
      .nullable()
      .meta({ description: "null if never used; refreshed at most once a minute." }),
  })
  .meta({
    id: "ApiKeyRecord",
    description:
      "The stored record, serialised as is (PascalCase). Only ID, Name, Active, CreatedAt and LastUsedAt " +
      "are to be relied on.",
  });

const keyId = z.object({ id: z.uuid().meta({ description: "The key's ID." }) });

export const createTokenEndpoint = endpoint({
  method: "post",
  path: "/api/v1/api-tokens",
  operationId: "createApiToken",
  summary: "Create an API key",
  tag: "API keys",
  origin: "contract",
  errors: "kit",
  request: { body: createKeyBody },
  responses: {
    201: { description: "The key, with its secret (shown once).", body: kitEnvelope(apiKeySchema, CREATED) },
  },
  failures: ["validation"],
});

export const listTokensEndpoint = endpoint({
  method: "get",
  path: "/api/v1/api-tokens",
  operationId: "listApiTokens",
  summary: "List API keys",
  description: "Every key of the account, revoked ones included, oldest first.",
  tag: "API keys",
  origin: "contract",
  errors: "kit",
  responses: {
    200: { description: "The keys (message is empty).", body: kitEnvelope(z.array(apiKeyRecordSchema), "") },
  },
  failures: [],
});

export const revokeTokenEndpoint = endpoint({
  method: "delete",
  path: "/api/v1/api-tokens/{id}",
  operationId: "revokeApiToken",
  summary: "Revoke an API key",
  description: "Immediate: the next request with the key is a 401. Revoking a revoked key is a 200.",
  tag: "API keys",
  origin: "contract",
  errors: "kit",
  request: { path: keyId },
  responses: { 200: { description: "Revoked (no data).", body: kitDone(REVOKED) } },
  failures: ["invalidTokenId", "notFound"],
});
