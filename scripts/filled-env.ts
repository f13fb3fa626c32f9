/**
 * Prints .env.example as an operator fills it in (scripts/lib/compose.ts's filledIn), for
 * scripts/check-docker.sh to give `docker compose config`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { filledIn } from "./lib/compose.ts";

const root = path.resolve(import.meta.dirname, "..");
process.stdout.write(filledIn(readFileSync(path.join(root, ".env.example"), "utf8")));
