#!/usr/bin/env bash
# Installs what scripts/check-dashboards.ts runs, from Debian, when any is missing: Prometheus and
# promtool (`prometheus`), amtool (`prometheus-alertmanager`) and postgres_exporter
# (`prometheus-postgres-exporter`). Used by CI before the check; needs root (or sudo) and apt.
set -euo pipefail

EXPORTER=/usr/bin/prometheus-postgres-exporter
present() { command -v prometheus && command -v promtool && command -v amtool && [ -x "$EXPORTER" ]; }
if present >/dev/null 2>&1; then
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
# The packages' postinst starts system services where systemd runs; in a container it does not.
install() {
  $SUDO apt-get install -y --no-install-recommends prometheus prometheus-alertmanager prometheus-postgres-exporter
}
if ! install; then
  # Only refresh the package lists when the install fails without it (a fresh image has none).
  $SUDO apt-get update
  install
fi

present >/dev/null
echo "prometheus, amtool, postgres_exporter: installed ($(prometheus --version 2>&1 | head -n 1))"
