#!/usr/bin/env bash
# One newcomer's run of the README, called by scripts/check-quick-start.sh as the user it tests,
# in that user's home: clone, `npm ci`, `npm start` until it prints the development key and
# delivers a send, stop it by its pid, then the README's test command on one test file. No
# DATABASE_URL: the embedded Postgres both times. Ports of its own, free ones, so a server already
# running on the defaults is no obstacle.
#   quick-start.sh <home> <bundle> <label>
set -euo pipefail
home=$1 bundle=$2 label=$3
say() { echo "quick start ($label): $*"; }
fail() {
  echo "quick start ($label): FAILED: $*" >&2
  exit 1
}
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

unset DATABASE_URL
export HOME=$home NO_COLOR=1 CI=true
cd "$home"
git -c advice.detachedHead=false clone -q "$bundle" shiri
cd shiri
say "npm ci in $PWD ($(id -un), home mode $(stat -c %a "$home"))"
npm ci --prefer-offline --no-audit --no-fund >"$home/npm-ci.log" 2>&1 || {
  tail -n 30 "$home/npm-ci.log" >&2
  fail "npm ci"
}

port=$(free_port)
export PORT=$port METRICS_PORT=$(free_port) EMBEDDED_PG_PORT=$(free_port)
export SMPP_ECONET_PORT=$(free_port) SMPP_NETONE_PORT=$(free_port) SMPP_TELECEL_PORT=$(free_port)
# A session of its own: its pid is the process group that the stop (here or in the caller) signals.
setsid npm start >"$home/start.log" 2>&1 &
pid=$!
echo "$pid" >"$home/start.pid"
stop_service() {
  kill -TERM -- "-$pid" 2>/dev/null || return 0
  for _ in $(seq 1 60); do
    kill -0 -- "-$pid" 2>/dev/null || return 0
    sleep 0.5
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  return 1
}
trap 'stop_service || true' EXIT

deadline=$((SECONDS + 180))
until grep -q "api key" "$home/start.log"; do
  kill -0 "$pid" 2>/dev/null || {
    tail -n 30 "$home/start.log" >&2
    fail "npm start exited before printing the development key"
  }
  [ $SECONDS -lt $deadline ] || {
    tail -n 30 "$home/start.log" >&2
    fail "no development key after 180 s"
  }
  sleep 1
done
key=$(sed -n 's/^ *api key *: *//p' "$home/start.log" | head -n 1)
say "npm start printed the development key; sending"
base="http://127.0.0.1:$port"
sent=$(curl -sS -m 10 -w '\n%{http_code}' "$base/api/v1/sms" -H "Authorization: Bearer $key" \
  -H 'Content-Type: application/json' -d '{"to":"+263771234567","from":"SHIRI","message":"Mhoro"}')
[ "$(tail -n 1 <<<"$sent")" = 202 ] || fail "the send was answered $(tail -n 1 <<<"$sent"): $(head -n 1 <<<"$sent")"
id=$(head -n 1 <<<"$sent" | node -e 'let s="";process.stdin.on("data",(c)=>s+=c).on("end",()=>console.log(JSON.parse(s).id))')
deadline=$((SECONDS + 60))
until curl -sS -m 10 "$base/api/v1/sms/$id" -H "Authorization: Bearer $key" | grep -q '"delivered_at":"'; do
  [ $SECONDS -lt $deadline ] || fail "message $id not delivered within 60 s"
  sleep 1
done
say "message $id accepted and delivered; stopping npm start (pid $pid)"
stop_service || fail "npm start did not stop within 30 s of SIGTERM"
trap - EXIT
pg_pid_file=$(readlink -f .data/pg)/postmaster.pid
[ ! -e "$pg_pid_file" ] || fail "the embedded Postgres outlived npm start ($pg_pid_file)"

say "npm test -- test/integration/get-sms.test.ts"
npm test -- test/integration/get-sms.test.ts >"$home/test.log" 2>&1 || {
  tail -n 40 "$home/test.log" >&2
  fail "npm test"
}
grep -E "^ *Tests " "$home/test.log" || true
say "passed"
