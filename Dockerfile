# One image for every role: `web` (default), `worker`, `tools`, `email`, `migrate` (or `start`: migrate, then web + worker).
#   podman build -t switchboard .            (official Node 24 image)
#   podman build --build-arg NODE_IMAGE=localhost/switchboard-node-base:24-bookworm -t switchboard .
#   podman run switchboard migrate && podman run switchboard web && podman run switchboard worker
ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim

# Build: every dependency (TypeScript, Vite, openapi-typescript), then the compiled server and the web app.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci refuses a lockfile whose optional platform packages the registry does not serve (see .ci/run).
# npm's cache is a build cache, not a layer: the deps stage and later builds install from it.
RUN --mount=type=cache,target=/root/.npm \
  npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY api api
COPY shared shared
COPY workers workers
COPY migrations migrations
RUN npm run build

# Production dependencies only: no Vite, test tools, TypeScript or embedded PostgreSQL. Optional ones
# are left out too: type packages, TypeScript (an optional peer of a runtime package) and native
# accelerators whose install scripts never run.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
  npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund || npm install --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    WORKER_METRICS_HOST=0.0.0.0 \
    WORKER_METRICS_PORT=9464 \
    MCP_SERVICE_PORT=9400 \
    RULES_DIR=/var/lib/switchboard/rules
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
COPY deploy/entrypoint.sh deploy/healthcheck.mjs deploy/
COPY deploy/monitoring deploy/monitoring
RUN mkdir -p /var/lib/switchboard/rules && chown -R node:node /var/lib/switchboard
USER node
EXPOSE 3000 9400 9464
VOLUME /var/lib/switchboard
# SIGTERM (podman/docker stop) lets a role finish its requests and jobs; give it the time to.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "deploy/healthcheck.mjs"]
ENTRYPOINT ["deploy/entrypoint.sh"]
CMD ["web"]
