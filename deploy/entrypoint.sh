#!/bin/sh
# The image's entry point: the first argument names the role, else SWITCHBOARD_ROLE (default web).
# `exec` makes the role the process that receives SIGTERM (from tini, the image's init, which
# forwards it and reaps the children document extraction forks), so it stops in order
# (shared/lifecycle.ts).
set -e
role=${1:-${SWITCHBOARD_ROLE:-web}}
[ $# -gt 0 ] && shift
case "$role" in
  web|worker|tools|email|start)
    if [ -n "$SWITCHBOARD_ROLE" ] && [ "$SWITCHBOARD_ROLE" != "$role" ]; then
      echo "the role argument \"$role\" contradicts SWITCHBOARD_ROLE=$SWITCHBOARD_ROLE (the HEALTHCHECK asks the latter)" >&2
      exit 64
    fi
    # The HEALTHCHECK asks the role this container runs; without SWITCHBOARD_ROLE it reads it here.
    [ -n "$SWITCHBOARD_ROLE" ] || echo "$role" > /tmp/switchboard-role 2>/dev/null || true ;;
esac
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
