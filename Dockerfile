# One image for every role: `web` (default), `worker`, `tools`, `email`, `migrate` (or `start`: migrate, then web + worker).
#   podman build -t switchboard .            (official Node 24 image)
#   podman build --build-arg NODE_IMAGE=localhost/switchboard-node-base:24-bookworm -t switchboard .
#   podman run switchboard migrate && podman run switchboard web && podman run switchboard worker
# The base is pinnable by digest for a reproducible build (the official image, or a mirror of it):
#   podman build --build-arg NODE_IMAGE=docker.io/library/node:24-bookworm-slim@sha256:<digest> \
#     --build-arg VERSION=$(git describe --tags --always) --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ) -t switchboard .
ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim

# Build: every dependency (TypeScript, Vite, openapi-typescript), then the compiled server and the web app.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci only: a lockfile that does not match package.json fails the build instead of resolving new versions.
# npm's cache is a build cache, not a layer: the deps stage and later builds install from it.
RUN --mount=type=cache,target=/root/.npm \
  npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY api api
COPY shared shared
COPY workers workers
COPY migrations migrations
RUN npm run build

# Production dependencies only: no Vite, test tools, TypeScript, embedded PostgreSQL, nor the web app's
# packages (React, Mantine, …: its build in dist/web is all the server serves). Optional ones are left
# out too: type packages, TypeScript (an optional peer of a runtime package) and native accelerators
# whose install scripts never run.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# What Node never loads at run time goes too: type declarations, source maps, TypeScript sources and
# Markdown (about half of the bytes of node_modules), and each package's own tests, examples and
# benchmarks (top-level folders of a package only: a folder of that name deeper may be code), and the
# OpenTelemetry packages' second and third builds for bundlers (their `module` and `esnext` export
# conditions, which Node never takes: it loads build/src).
RUN --mount=type=cache,target=/root/.npm \
  npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
  && find node_modules -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' -o -iname '*.md' \) -delete \
  && find node_modules -regextype posix-extended -type d \
       -regex 'node_modules/(@[^/]+/)?[^/]+/(test|tests|__tests__|example|examples|benchmark|bench|\.github)' -prune -exec rm -rf {} + \
  && rm -rf node_modules/@opentelemetry/*/build/esm node_modules/@opentelemetry/*/build/esnext

FROM ${NODE_IMAGE} AS runtime
# An init process as PID 1 (tini, from Debian): it reaps the children document extraction forks and
# forwards SIGTERM to the role; -s keeps it a reaper under `docker run --init`, where it is not PID 1.
# apt-get clean drops the package caches (/var/cache/apt/*.bin, 80 MB) the update leaves.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && apt-get clean \
  && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    WORKER_METRICS_HOST=0.0.0.0 \
    WORKER_METRICS_PORT=9464 \
    MCP_SERVICE_PORT=9400 \
    RULES_DIR=/var/lib/switchboard/rules
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
# The compiled server and the web app's built assets (dist/web), never its sources or packages.
COPY --from=build /app/dist dist
COPY package.json ./
COPY deploy/entrypoint.sh deploy/healthcheck.mjs deploy/
COPY deploy/monitoring deploy/monitoring
RUN mkdir -p /var/lib/switchboard/rules && chown -R node:node /var/lib/switchboard
USER node
EXPOSE 3000 9400 9464 9465
VOLUME /var/lib/switchboard
# SIGTERM (podman/docker stop) lets a role drain and finish its requests and jobs within
# SHUTDOWN_TIMEOUT_MS (25 s); give it the time to (a 30 s grace period).
STOPSIGNAL SIGTERM
# Liveness of the container's role (SWITCHBOARD_ROLE or the role argument; see deploy/healthcheck.mjs).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "deploy/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "-s", "--", "deploy/entrypoint.sh"]
CMD []
# Last, so a new revision or date reuses every layer above from the cache.
ARG NODE_IMAGE
ARG VERSION=unknown
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="switchboard" \
      org.opencontainers.image.description="Open platform for running AI assistants in production: session memory, CRM and SRE automation." \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"

