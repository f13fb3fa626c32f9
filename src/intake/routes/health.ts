import { z } from "zod";
import type { BindState } from "../../observability/health.ts";
import { endpoint } from "../openapi/endpoint.ts";

/*
 * GET /healthz and GET /readyz, as the API port serves them (app.ts; the answers come from
 * src/observability/health.ts). Outside the API's conventions: no key, no rate limit, their own
 * JSON bodies, Cache-Control: no-store. The metrics port of every role serves the same two paths.
 */

const noStore = z.object({ "Cache-Control": z.literal("no-store") });

export const healthzAnswerSchema = z.object({
  status: z.literal("ok"),
  uptime_seconds: z.int().nonnegative().meta({ description: "Seconds since the process started." }),
});

const databaseCheck = z.object({
  ok: z.boolean(),
  error: z.enum(["unreachable", "timeout", "error"]).optional(),
});
const migrationsCheck = z.object({
  ok: z.boolean().meta({ description: "Every migration of this code is applied." }),
  applied: z.int(),
  expected: z.int(),
  missing: z.array(z.string()),
});

// Every state a bind can report (a Record over BindState, so a new state fails the type check here).
const BIND_STATES = Object.keys({
  starting: true,
  bound: true,
  unbound: true,
  standby: true,
  stopped: true,
} satisfies Record<BindState, true>) as [BindState, ...BindState[]];

const operatorsCheck = z.record(z.string(), z.object({ ok: z.boolean(), state: z.enum(BIND_STATES) })).meta({
  description:
    "A worker's metrics port only: each operator's bind, ok when bound or standby. Absent on the API port.",
});

export const readinessReportSchema = z
  .object({
    status: z.enum(["ready", "not ready"]),
    checks: z.object({
      database: databaseCheck,
      // Absent when the database could not be asked.
      migrations: migrationsCheck.optional(),
      operators: operatorsCheck.optional(),
    }),
  })
  .meta({ id: "ReadinessReport", description: "What /readyz checked (the API port leaves operators out)." });

export const healthzEndpoint = endpoint({
  method: "get",
  path: "/healthz",
  operationId: "healthz",
  summary: "Liveness: the process answers",
  tag: "Health",
  origin: "extension",
  errors: "kit",
  authenticated: false,
  responses: { 200: { description: "Alive.", body: healthzAnswerSchema, headers: noStore } },
  failures: [],
});

export const readyzEndpoint = endpoint({
  method: "get",
  path: "/readyz",
  operationId: "readyz",
  summary: "Readiness: the database reachable and migrated",
  description:
    "The database is asked at most once a second per process, with a 1 s timeout. A carrier being " +
    "down does not make the API port not ready (sends are queued).",
  tag: "Health",
  origin: "extension",
  errors: "kit",
  authenticated: false,
  responses: {
    200: { description: "Ready.", body: readinessReportSchema, headers: noStore },
    503: {
      description: "Not ready: take the process out of the balancer and ask again after Retry-After.",
      body: readinessReportSchema,
      headers: noStore.extend({ "Retry-After": z.literal("2") }),
    },
  },
  failures: [],
});
