#!/usr/bin/env bash
# The README's quick start and test command on a fresh clone, run as a newcomer would: as root
# in a home directory of mode 0700 (as in many containers and VMs), then as an unprivileged user
# in a 0700 home of its own (created with useradd when missing). No DATABASE_URL: the embedded
# Postgres. Each run is bounded in time; what it started is stopped by pid and its folders removed.
# Needs root (CI runs as root); clones this checkout's HEAD commit.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
newcomer=shiri-newcomer
[ "$(id -u)" -eq 0 ] || {
  echo "check-quick-start: run as root (it tests root and an unprivileged user)" >&2
  exit 1
}
id -u "$newcomer" >/dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$newcomer"

# A random token in every path this run creates, so leftovers are found by it alone.
base=$(mktemp -d /tmp/shiri-qs.XXXXXX)
token=$(basename "$base")
chmod 755 "$base"
cleanup() {
  for home in "$base/root" "$base/user"; do
    if [ -s "$home/start.pid" ]; then kill -KILL -- "-$(cat "$home/start.pid")" 2>/dev/null || true; fi
  done
  # Servers that outlived a killed run: the embedded Postgres of npm start or of the tests.
  for pid in $(ps -eo pid=,args= | awk -v t="$token" 'index($0, t) && $2 ~ /postgres/ { print $1 }'); do
    kill -INT "$pid" 2>/dev/null || true
  done
  sleep 1
  rm -rf "$base" /var/lib/shiri/data/*"$token"* "${TMPDIR:-/tmp}"/shiri-root/data/*"$token"* 2>/dev/null || true
}
trap cleanup EXIT

git -C "$repo" bundle create -q "$base/shiri.bundle" HEAD
chmod 644 "$base/shiri.bundle"
cache=$(npm config get cache 2>/dev/null)

# As root, in a home of mode 0700 that the postgres user cannot enter; and as the unprivileged
# user, with a copy of the npm cache (the same packages, no download). The two runs go side by
# side: each has its own home, ports and embedded Postgres, and most of each is waiting.
mkdir -m 700 "$base/root" "$base/user"
[ -d "$cache/_cacache" ] && cp -r "$cache/_cacache" "$base/user/npm-cache"
chown -R "$newcomer:" "$base/user"
cafile=$(npm config get cafile 2>/dev/null || true)
timeout --kill-after=10 600 bash "$repo/scripts/lib/quick-start.sh" "$base/root" "$base/shiri.bundle" root &
as_root=$!
timeout --kill-after=10 600 runuser -u "$newcomer" -- env \
  npm_config_cache="$base/user/npm-cache" \
  ${cafile:+$([ "$cafile" != null ] && echo "npm_config_cafile=$cafile")} \
  bash "$repo/scripts/lib/quick-start.sh" "$base/user" "$base/shiri.bundle" "$newcomer" &
as_user=$!
failed=0
wait "$as_root" || failed=1
wait "$as_user" || failed=1
[ "$failed" -eq 0 ] || {
  echo "quick start: FAILED (see above)" >&2
  exit 1
}
echo "quick start: root (0700 home) and $newcomer both passed"
