import type { RequestHandler } from "express";
import { z } from "zod";
import { createApiKey, listApiKeys, revokeApiKey } from "../../accounts/api-keys.ts";
import { coversAll, SCOPES, withinAddresses } from "../../accounts/scopes.ts";
import { isNetwork } from "../../cidr.ts";
import type { IntakeDeps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { kitDone, kitEnvelope, timestamp } from "../openapi/conventions.ts";
import { endpoint } from "../openapi/endpoint.ts";
import { choiceListField, parseBody, textField, UUID_PATTERN } from "../validation.ts";

const NETWORK_RULE = "must be an IPv4 or IPv6 address or CIDR with no bit set past its prefix (10.0.0.0/8)";
const MAX_ALLOWED_IPS = 20;

/** The API key endpoints; all in the Kit conventions. */
export const createKeyBody = z
  .object({
    name: textField(100),
    // Extensions: what the key may do, from where, until when (none given: all, anywhere, always).
    scopes: choiceListField(SCOPES, { one: "scope", article: "a" })
      .optional()
      .meta({ description: "Extension: what the key may do; every scope when absent." }),
    allowed_ips: z
      .array(z.string({ error: NETWORK_RULE }).refine(isNetwork, NETWORK_RULE), {
        error: "must be an array of addresses or CIDRs",
      })
      .min(1, "must name at least one address or CIDR")
      .max(MAX_ALLOWED_IPS, `must name at most ${MAX_ALLOWED_IPS} addresses or CIDRs`)
      .optional()
      .meta({ description: "Extension: the client addresses the key may be used from; any when absent." }),
    expires_at: z.iso
      .datetime({ offset: true, error: "must be an RFC 3339 date-time with a time zone offset" })
      // A time that is not one is told once, by the line above.
      .refine((at) => !(Date.parse(at) <= Date.now()), "must be in the future")
      .optional()
      .meta({ description: "Extension: when the key stops working (then a 401); never when absent." }),
  })
  .strict();

const CREATED = "api token created: save the token now, it is returned only once";
const REVOKED = "api token revoked";

export function createToken(deps: IntakeDeps): RequestHandler {
  return async (req, res) => {
    const { name, scopes, allowed_ips, expires_at } = parseBody(createKeyBody, req.body);
    const own = res.locals.keyPolicy;
    // A key never grants more than it has: no scope, address or time beyond its own. What is not
    // asked for is inherited, so a narrow key's keys are as narrow.
    const policy = {
      scopes: scopes ?? own.scopes,
      allowedIps: allowed_ips ?? own.allowedIps,
      expiresAt: expires_at ? new Date(expires_at) : own.expiresAt,
    };
    const later = own.expiresAt && policy.expiresAt && policy.expiresAt > own.expiresAt;
    if (!coversAll(own.scopes, policy.scopes) || !withinAddresses(own.allowedIps, policy.allowedIps) || later)
      throw new ApiError("beyondOwnKey");
    const key = await createApiKey(deps.pool, res.locals.accountId, name.trim(), policy);
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
    const revoked = await revokeApiKey(deps.pool, res.locals.accountId, id, res.locals.keyPolicy.scopes);
    if (revoked === "missing") throw new ApiError("notFound");
    if (revoked === "beyond") throw new ApiError("beyondOwnKey");
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
    scopes: z
      .array(z.enum(SCOPES))
      .nullable()
      .meta({ description: "Extension: what the key may do; null for every scope." }),
    allowed_ips: z
      .array(z.string())
      .nullable()
      .meta({ description: "Extension: the client addresses it may be used from; null for any." }),
    expires_at: timestamp()
      .nullable()
      .meta({ description: "Extension: when it stops working; null for never." }),
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
    Scopes: z
      .array(z.enum(SCOPES))
      .nullable()
      .meta({ description: "Extension: what the key may do; null for every scope." }),
    AllowedIps: z
      .array(z.string())
      .nullable()
      .meta({ description: "Extension: the client addresses it may be used from; null for any." }),
    ExpiresAt: timestamp()
      .nullable()
      .meta({ description: "Extension: when it stops working; null for never." }),
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
  failures: ["validation", "beyondOwnKey"],
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
  failures: ["invalidTokenId", "notFound", "beyondOwnKey"],
});
