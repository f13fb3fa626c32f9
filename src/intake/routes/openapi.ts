import type { RequestHandler } from "express";
import { z } from "zod";
import type { Config } from "../../config.ts";
import { openApiDocument } from "../openapi/document.ts";
import { type Endpoint, endpoint } from "../openapi/endpoint.ts";

/** GET /api/v1/openapi.json — the OpenAPI document, unauthenticated; built once, on first use. */
export function serveOpenApi(endpoints: readonly Endpoint[], config: Config): RequestHandler {
  let body: string | null = null;
  return (_req, res) => {
    body ??= JSON.stringify(openApiDocument(endpoints, config));
    res.status(200).type("application/json").send(body);
  };
}

export const openApiEndpoint = endpoint({
  method: "get",
  path: "/api/v1/openapi.json",
  operationId: "getOpenApiDocument",
  summary: "This document",
  description: "OpenAPI 3.1, generated from the schemas the endpoints validate with. No key needed.",
  tag: "Reference",
  origin: "extension",
  errors: "kit",
  authenticated: false,
  responses: {
    200: {
      description: "The OpenAPI document.",
      body: z.looseObject({ openapi: z.literal("3.1.0") }).meta({ description: "An OpenAPI 3.1 document." }),
    },
  },
  failures: [],
});
