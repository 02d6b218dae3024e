#!/usr/bin/env bash
# Starts a throwaway StackShip (SQLite, no runner, HTTP only) on a free data directory and runs the
# go-tfe smoke program against it; or, with STACKSHIP_ADDRESS and STACKSHIP_TOKEN set, runs it
# against that server instead. Not part of CI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

if [[ -n "${STACKSHIP_ADDRESS:-}" && -n "${STACKSHIP_TOKEN:-}" ]]; then
  cd "$here" && exec go run .
fi

port="${SMOKE_PORT:-18081}"
data="$(mktemp -d "${TMPDIR:-/tmp}/stackship-go-tfe-smoke.XXXXXX")"
chmod 700 "$data"
token="ss0.smoke$(openssl rand -hex 16)"
(
  cd "$root"
  STACKSHIP_DATA_DIR="$data" STACKSHIP_HTTP_PORT="$port" STACKSHIP_HTTPS_PORT=off STACKSHIP_RUNNER_CONCURRENCY=0 \
    STACKSHIP_BOOTSTRAP_TOKEN="$token" exec node --import tsx server/src/main.ts >"$data/server.log" 2>&1
) &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$data"' EXIT

for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$data/server.log"; exit 1; }
  sleep 0.5
done
cd "$here"
STACKSHIP_ADDRESS="http://127.0.0.1:$port" STACKSHIP_TOKEN="$token" go run .
