#!/usr/bin/env bash
# Start the ts-worker benchmark peer under `wrangler dev` (workerd) on 127.0.0.1.
#
#   bench/peers/ts-worker/run.sh [PORT]        (default 8789)
#
# - Needs Node >= 22.12 (wrangler 4.164): scripts/use-node22 finds or installs it.
# - Installs dependencies with `npm ci` (package-lock.json) when node_modules is
#   missing.
# - The requestState HMAC key: MRTR_REQUEST_STATE_KEY from the environment is
#   written to .dev.vars (mode 0600); without it an existing .dev.vars is kept,
#   else a fresh random key is generated into it.
# - WRANGLER_LOG_LEVEL (default "log", wrangler's own default) is passed as
#   --log-level; "warn" silences the per-request log lines.
set -euo pipefail
cd "$(dirname "$0")"
PORT="${1:-${PORT:-8789}}"

. ../../../scripts/use-node22

if [ ! -x node_modules/.bin/wrangler ]; then
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
fi

umask 077
if [ -n "${MRTR_REQUEST_STATE_KEY:-}" ]; then
  printf 'MRTR_REQUEST_STATE_KEY=%s\n' "$MRTR_REQUEST_STATE_KEY" > .dev.vars
elif [ ! -f .dev.vars ]; then
  printf 'MRTR_REQUEST_STATE_KEY=%s\n' "$(head -c 32 /dev/urandom | base64)" > .dev.vars
  echo "run.sh: generated a requestState key into $(pwd)/.dev.vars" >&2
fi

export WRANGLER_SEND_METRICS=false
exec node_modules/.bin/wrangler dev --port "$PORT" --ip 127.0.0.1 \
  --show-interactive-dev-session=false --log-level "${WRANGLER_LOG_LEVEL:-log}"
