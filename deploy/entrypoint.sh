#!/bin/sh
# The image's entry point: the first argument names the role. `exec` makes the role PID 1, so it
# receives SIGTERM itself and stops in order (shared/lifecycle.ts).
set -e
role=${1:-web}
[ $# -gt 0 ] && shift
case "$role" in
  web) exec node dist/api/main.js "$@" ;;
  worker) exec node dist/workers/main.js "$@" ;;
  tools) exec node dist/api/tools-server/main.js "$@" ;;
  email) exec node dist/api/email-server/main.js "$@" ;;
  migrate) exec node dist/shared/cli/migrate.js "$@" ;;
  start) exec node dist/shared/cli/start.js "$@" ;;
  healthcheck) exec node deploy/healthcheck.mjs "$@" ;;
  *) exec "$role" "$@" ;;
esac
