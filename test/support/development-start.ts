import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../../bench/lib/shiri-process.ts";

/**
 * For tests that start Shiri as a development install does (`npm start`, the embedded Postgres):
 * what they inherit, where its data goes, and a port someone else holds.
 */

/** This environment without DATABASE_URL and SHIRI_ENV, which would choose another database or mode. */
export function withoutDatabase(): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => key !== "DATABASE_URL" && key !== "SHIRI_ENV"),
  );
}

/** A temporary data folder, and its removal. */
export function dataFolder(name: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), `shiri-${name}-`));
  // As root the server runs as the OS user "postgres", which must enter the folder.
  chmodSync(dir, 0o755);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A loopback port another listener holds until released: a port in use. */
export async function heldPort(): Promise<{ port: number; release(): Promise<void> }> {
  const port = await freePort();
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(port, "127.0.0.1", resolve));
  return { port, release: () => new Promise((resolve) => holder.close(() => resolve())) };
}
