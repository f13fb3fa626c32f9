#!/usr/bin/env bash
# The image and the compose file with a real Docker engine: `docker build` of the Dockerfile and
# `docker compose config` with .env.example's required values filled in. Where no engine answers
# (as where CI runs now) it says so in one line and passes: `npm run check:compose` checks the
# compose file without Docker, and scripts/production-tree.sh lays out the image's contents.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v docker >/dev/null 2>&1 || ! timeout 20 docker info >/dev/null 2>&1; then
  echo "docker: no Docker engine answers (docker info): docker build and docker compose config skipped"
  exit 0
fi
if docker compose version >/dev/null 2>&1; then compose=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then compose=(docker-compose)
else
  echo "docker: an engine answers but neither docker compose nor docker-compose is installed" >&2
  exit 1
fi
env_file=$(mktemp)
trap 'rm -f "$env_file"' EXIT
# .env.example as an operator fills it in, as `npm run check:compose` reads it.
node --import tsx scripts/filled-env.ts >"$env_file"
"${compose[@]}" --env-file "$env_file" config --quiet
echo "docker: docker compose config passed"
version=$(node -p 'require("./package.json").version')
docker build --quiet -t "shiri:$version-ci" . >/dev/null
echo "docker: docker build passed (shiri:$version-ci, $(docker image inspect -f '{{.Size}}' "shiri:$version-ci") bytes)"
