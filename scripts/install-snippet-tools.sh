#!/usr/bin/env bash
# Installs what the webhook verification snippets' tests run (test/integration/webhook-verification
# .test.ts), from Debian, when any is missing: `go` (golang-go) for verify.go and `php` (php-cli)
# for verify.php. Used by CI before `npm test`: with CI=true those tests fail instead of skipping
# when a tool is missing. `npm install && npm test` needs neither. Needs root (or sudo) and apt.
set -euo pipefail

present() { command -v go && command -v php; }
if present >/dev/null 2>&1; then
  echo "snippet tools: already installed ($(go version), $(php --version | head -n 1))"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-snippet-tools: not root and no sudo; install Debian's golang-go and php-cli by hand" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
install() { $SUDO apt-get install -y --no-install-recommends golang-go php-cli; }
if ! install; then
  # Only refresh the package lists when the install fails without it (a fresh image has none).
  $SUDO apt-get update
  install
fi

present >/dev/null
echo "snippet tools: installed ($(go version), $(php --version | head -n 1))"
