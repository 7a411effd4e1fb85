#!/bin/sh
# The image's entry point: the first argument names the role. `exec` makes the role PID 1, so it
# receives SIGTERM itself and stops in order (shared/lifecycle.ts).
set -e
role=${1:-web}
# Tracing starts before a role's modules load; it does nothing unless OTEL_* settings ask for it.
preload="--import ./dist/shared/telemetry-preload.js"
[ $# -gt 0 ] && shift
case "$role" in
  web) exec node $preload dist/api/main.js "$@" ;;
  worker) exec node $preload dist/workers/main.js "$@" ;;
  tools) exec node $preload dist/api/tools-server/main.js "$@" ;;
  email) exec node $preload dist/api/email-server/main.js "$@" ;;
  migrate) exec node dist/shared/cli/migrate.js "$@" ;;
  start) exec node dist/shared/cli/start.js "$@" ;;
  healthcheck) exec node deploy/healthcheck.mjs "$@" ;;
  *) exec "$role" "$@" ;;
esac
