#!/usr/bin/env node
// The `shiri` command. In production (NODE_ENV=production, as the image sets, or an install
// without tsx, i.e. `npm ci --omit=dev`) it runs the JavaScript `npm run build` compiled into
// dist/; in development it runs the TypeScript sources through tsx, so an edit needs no rebuild
// and a dist/ left behind by an old build is never run by mistake.
import { existsSync } from "node:fs";
import { engineRefusal } from "./node-engines.mjs";

const refusal = engineRefusal();
if (refusal) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}

const compiled = new URL("../dist/src/cli/main.js", import.meta.url);

async function tsx() {
  try {
    return await import("tsx/esm/api");
  } catch (err) {
    if (err?.code === "ERR_MODULE_NOT_FOUND") return null;
    throw err;
  }
}

const runner = process.env.NODE_ENV === "production" ? null : await tsx();
if (runner) {
  runner.register();
  await import("../src/cli/main.ts");
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  process.stderr.write(
    "shiri: no compiled code in dist/ (production runs it): run `npm run build`, or run from a development install (`npm install`)\n",
  );
  process.exit(1);
}
