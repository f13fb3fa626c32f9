#!/usr/bin/env bash
# Installs Prometheus and promtool (Debian's `prometheus` package) when either is missing.
# Used by CI before scripts/check-dashboards.ts; needs root (or sudo) and apt.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
  echo "prometheus: already installed ($(prometheus --version 2>&1 | head -n 1))"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-prometheus: not root and no sudo; install Debian's prometheus package by hand" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
# --no-install-recommends: the exporters and the web console libraries are not needed here.
# The package's postinst starts a system prometheus where systemd runs; in a container it does not.
install() { $SUDO apt-get install -y --no-install-recommends prometheus; }
if ! install; then
  # Only refresh the package lists when the install fails without it (a fresh image has none).
  $SUDO apt-get update
  install
fi

command -v prometheus >/dev/null && command -v promtool >/dev/null
echo "prometheus: installed ($(prometheus --version 2>&1 | head -n 1))"
