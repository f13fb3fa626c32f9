import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The folder Shiri is installed in, its package.json's: one up from src/ in a checkout, two up
 * from dist/src/ (the compiled tree the image runs).
 */
export const CHECKOUT_DIR: string = (() => {
  const found = ["../", "../../"]
    .map((up) => fileURLToPath(new URL(up, import.meta.url)))
    .find((dir) => existsSync(path.join(dir, "package.json")));
  if (!found) throw new Error("package.json not found beside the installed code");
  return found;
})();
