import type { z } from "zod";
import type { Config } from "../../config.ts";
import type { ErrorName, ErrorShape } from "../errors.ts";

/** How the document groups endpoints; each tag is described in document.ts. */
export type Tag = "Messages" | "API keys" | "Account" | "Inbound" | "Webhooks" | "Health" | "Reference";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

export interface ResponseEntry {
  description: string;
  /** The body; none for an answer without one. */
  body?: z.ZodType;
  /** The body's media type: JSON unless given (e.g. "text/csv" with a z.string() body). */
  contentType?: string;
  /** Response headers worth documenting, by name. */
  headers?: z.ZodObject;
}

/**
 * One endpoint's entry in the OpenAPI document, declared beside its handler (see
 * docs/api.md, "Adding an endpoint"). The document is built from these entries; a test holds
 * them and the routes registered on the app to one another.
 */
export interface Endpoint {
  method: HttpMethod;
  /** As OpenAPI writes it: `/api/v1/sms/{id}` for Express's `/api/v1/sms/:id`. */
  path: string;
  /** Unique across the document; what generated clients name the call. */
  operationId: string;
  summary: string;
  description?: string;
  tag: Tag;
  /** Promised by the public contract, or added by Shiri (an extension, in the Kit conventions). */
  origin: "contract" | "extension";
  /** The error convention the endpoint answers in (a 401 is Kit-shaped everywhere). */
  errors: ErrorShape;
  /** False for the few endpoints that need no API key; true when omitted. */
  authenticated?: boolean;
  request?: {
    /** Path parameters, named as in `path`. */
    path?: z.ZodObject;
    query?: z.ZodObject;
    headers?: z.ZodObject;
    /** A JSON body; a function when the schema depends on configuration (e.g. a limit). */
    body?: z.ZodType | ((config: Config) => z.ZodType);
  };
  /** Successful answers by status. */
  responses: Record<number, ResponseEntry>;
  /**
   * The catalogue errors (src/intake/errors.ts) the endpoint raises itself. Added for every
   * endpoint: 401 when authenticated, the body errors (400, 413) when it reads a body, 500, 503.
   */
  failures: readonly ErrorName[];
}

/** Declares an endpoint entry (checked against the type where it is written). */
export const endpoint = (entry: Endpoint): Endpoint => entry;
