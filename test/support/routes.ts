import type express from "express";
import type { ErrorShape } from "../../src/intake/errors.ts";

/** One route as registered on the Express app: method, path in OpenAPI form, error convention. */
export interface RegisteredRoute {
  method: string;
  path: string;
  errors: ErrorShape;
}

interface Layer {
  name?: string;
  handle?: unknown;
  route?: { path: unknown; methods: Record<string, boolean>; stack: Layer[] };
}

/**
 * Walks the app's router. Routes must be registered on the app itself: a mounted router keeps
 * no path to read back (Express 5), so one fails the walk loudly instead of hiding its routes.
 */
export function registeredRoutes(app: express.Express): RegisteredRoute[] {
  const out: RegisteredRoute[] = [];
  for (const layer of app.router.stack as Layer[]) {
    if (layer.name === "router")
      throw new Error(
        "a mounted router cannot be walked: register its routes on the app (src/intake/app.ts)",
      );
    const route = layer.route;
    if (!route) continue;
    if (typeof route.path !== "string") throw new Error(`a route path that is not a string: ${route.path}`);
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    // The convention middleware (app.ts `shape`) carries its convention; Kit when there is none.
    const marked = route.stack.find((l) => typeof l.handle === "function" && "errorShape" in l.handle)
      ?.handle as { errorShape: ErrorShape } | undefined;
    for (const [method, on] of Object.entries(route.methods))
      if (on) out.push({ method, path, errors: marked?.errorShape ?? "kit" });
  }
  return out;
}
