#!/usr/bin/env bash
# Serves the release build in dist/ on loopback, runs the end-to-end
# browser tests against it, and stops the server by PID whatever happens.
set -euo pipefail
cd "$(dirname "$0")/../.."
PORT=${E2E_PORT:-8137}
mkdir -p target/e2e
[ -f dist/index.html ] || { echo "e2e: dist/ missing; run make build-web" >&2; exit 1; }
python3 tests/e2e/serve.py dist "$PORT" >target/e2e/server.log 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$PORT/" >/dev/null 2>&1 && break
  kill -0 "$SERVER" 2>/dev/null || { cat target/e2e/server.log >&2; exit 1; }
  sleep 0.1
done
for t in tests/e2e/${E2E_ONLY:-*}.test.mjs; do
  echo "e2e: $t"
  APP_URL="http://127.0.0.1:$PORT/" node "$t"
done
