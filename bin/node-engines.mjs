// The Node.js versions package.json `engines.node` names are the ones CI runs the tests on
// (.ci/run); bin/shiri.mjs refuses any other at once, in one line, before loading anything.
// Ranges understood: `^X.Y.Z` and `>=X.Y.Z`, joined by `||` (what `engines` uses); any other
// form is not judged here (accepted).
import { readFileSync } from "node:fs";

/** [major, minor, patch] of "v22.12.0" or "22.12.0"; null when it is not one. */
function parts(version) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

function atLeast(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return true;
}

/** Whether `version` satisfies `range` (e.g. "^20.19.0 || ^22.12.0"). */
export function satisfies(version, range) {
  const have = parts(version);
  if (!have) return true;
  return range.split("||").some((alternative) => {
    const text = alternative.trim();
    const caret = /^\^(\S+)$/.exec(text);
    const floor = /^>=\s*(\S+)$/.exec(text);
    const want = parts((caret ?? floor)?.[1] ?? "");
    if (!want) return true;
    return atLeast(have, want) && (floor !== null || have[0] === want[0]);
  });
}

/**
 * The one-line refusal when the running Node.js is not one `engines` names, else null.
 * SHIRI_ANY_NODE=1 runs it anyway (an untested version, at your own risk).
 */
export function engineRefusal(
  version = process.versions.node,
  packageJson = new URL("../package.json", import.meta.url),
  env = process.env,
) {
  if (env.SHIRI_ANY_NODE === "1") return null;
  const range = JSON.parse(readFileSync(packageJson, "utf8")).engines?.node;
  if (typeof range !== "string" || satisfies(version, range)) return null;
  return `shiri: Node.js ${version} is not one this release is tested on (package.json engines: ${range}); install one of those, or set SHIRI_ANY_NODE=1 to run it anyway`;
}
