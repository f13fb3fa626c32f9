#!/usr/bin/env bash
# Runs a command on another Node.js major: the npm registry's `node` package (a binary shipped
# inside a registry package) installed once into a cache folder, first on PATH, so `node`, npm's
# scripts and every process the tests spawn (process.execPath) are that version. CI runs the tests
# on each major package.json `engines` names this way (.ci/run).
#   scripts/with-node.sh <major> <command> [args…]     e.g. scripts/with-node.sh 22 npx vitest run test/unit
set -euo pipefail
major=${1:?usage: with-node.sh <major> <command> [args...]}
shift
cache=${SHIRI_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/shiri-node}/$major
bin=$cache/node_modules/node/bin/node
if [ ! -x "$bin" ] || [ "$("$bin" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "$major" ]; then
  rm -rf "$cache"
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --no-package-lock "node@$major" >"$cache.log" 2>&1 ||
    { echo "with-node: npm install node@$major failed (see $cache.log)" >&2; exit 1; }
fi
got=$("$bin" --version 2>/dev/null) || { echo "with-node: $bin does not run" >&2; exit 1; }
[[ $got == "v$major."* ]] || { echo "with-node: node@$major installed $got" >&2; exit 1; }
export PATH="$(dirname "$bin"):$PATH"
exec "$@"
