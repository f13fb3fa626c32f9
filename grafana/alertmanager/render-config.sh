#!/bin/sh
# Alertmanager does not read the environment: this writes its config from alertmanager.yml with
# ${ALERT_WEBHOOK_URL} replaced by that variable's value. POSIX sh and sed only, as the
# prom/alertmanager image (busybox) has them: docker-compose.yml runs it before Alertmanager, and
# scripts/check-dashboards.ts runs it too, with a receiver of its own.
#   ALERT_WEBHOOK_URL=https://… render-config.sh <alertmanager.yml> <out>
set -eu
url=${ALERT_WEBHOOK_URL:-}
case $url in
  "") echo "render-config: ALERT_WEBHOOK_URL is empty: the webhook every alert is posted to (see .env.example)" >&2; exit 1 ;;
  *[[:space:]]*) echo "render-config: ALERT_WEBHOOK_URL holds white space (encode it as %20)" >&2; exit 1 ;;
  http://* | https://*) ;;
  *) echo "render-config: ALERT_WEBHOOK_URL must start with http:// or https://" >&2; exit 1 ;;
esac
# sed's replacement: & | and \ stand for themselves.
escaped=$(printf '%s\n' "$url" | sed 's/[\\&|]/\\&/g')
sed "s|\${ALERT_WEBHOOK_URL}|$escaped|g" "$1" >"$2.tmp"
mv "$2.tmp" "$2"
