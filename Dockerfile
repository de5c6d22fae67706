# Four images from one file, one target per daemon (and the operator console), for the tasks' CPU (x86_64 by default; linux/arm64
# with the stack's `-c cpuArchitecture=ARM64`): a plain `docker build` builds for the builder's own CPU.
#   docker buildx build --platform linux/amd64 --target relay    -t outbox-relay .
#   docker buildx build --platform linux/amd64 --target consumer -t outbox-consumer .
#   docker buildx build --platform linux/amd64 --target api      -t outbox-api .
#   docker buildx build --platform linux/amd64 --target console  -t outbox-console .
# Node 24, inside package.json's engines (^22.12.0 || >=24.0.0; docs/deployment.md, "Images").
# Each runtime image holds one app as `pnpm deploy --prod` lays it out: its dist/ (with source maps),
# its production dependencies, no dev dependencies, no workspace, no pnpm.
# The base image by tag and digest (the multi-arch index), so a rebuild gets the same bytes; to move
# it, `docker buildx imagetools inspect node:24-bookworm-slim` and replace both parts together.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# ── build: the whole workspace, compiled ────────────────────────────────────────────────────────────
FROM ${NODE_IMAGE} AS build
ENV CI=true
WORKDIR /repo
# The lockfile alone decides this layer: the store is refetched only when dependencies change.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY patches ./patches
# Exactly the pnpm that `packageManager` names (corepack cannot be relied on: no network for its
# signature keys on some builders).
RUN npm install -g "$(node -p 'require("./package.json").packageManager')"
RUN pnpm fetch
COPY . .
# Offline from the fetched store; no lifecycle scripts (tsc needs none: no native builds, no binaries).
RUN pnpm install --frozen-lockfile --offline --ignore-scripts
# The same script the packaging tests run: build, then `pnpm deploy --prod` per daemon, offline
# and from the lockfile alone.
RUN infra/scripts/package-daemons.sh /out

# ── runtime: shared by every target ─────────────────────────────────────────────────────────────────
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps
# Amazon RDS's CA bundle (every region): the default DB_SSL_CA_FILE, which DB_SSL_MODE=verify-full
# trusts. Not pinned by checksum (it changes when AWS adds a CA). --chmod (BuildKit) because a file
# ADDed from a URL is 0600 root, and the daemons run as `node`.
ADD --chmod=644 https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem /etc/ssl/certs/rds-global-bundle.pem
WORKDIR /app
# The ops server (/livez, /readyz, /metrics); OPS_PORT moves it.
EXPOSE 9090
# The daemons stop cleanly on SIGTERM (drain, then exit 0). Orchestrators send it; say so explicitly.
STOPSIGNAL SIGTERM
# No curl in the slim image: Node's fetch asks /livez.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.OPS_PORT||9090)+'/livez',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The code stays root-owned and read-only to the process; the daemons write nothing but stdout.
USER node

FROM runtime AS relay
COPY --from=build /out/relay /app
# Exec form: node is the process that gets SIGTERM (run with an init, e.g. ECS initProcessEnabled or
# `docker run --init`, so PID 1 forwards it). Never `npm start`/`pnpm start`: they swallow signals.
CMD ["node", "dist/main.js"]

FROM runtime AS consumer
COPY --from=build /out/consumer /app
CMD ["node", "dist/main.js"]

FROM runtime AS api
COPY --from=build /out/api /app
# The photo service's port (API_PORT); the ops server stays on 9090.
EXPOSE 8080
# `node dist/main.js reconcile` runs one reconciliation pass (a scheduled task) instead of the service;
# `node dist/main.js migrate` applies the outbox's migrations and the photo service's (the migration task).
CMD ["node", "dist/main.js"]

FROM runtime AS console
COPY --from=build /out/console /app
# Off loopback, so it refuses to start without CONSOLE_TOKEN or CONSOLE_USERS (exit 78): inject one
# from a secret. It has no ops server: its health is its own port answering (401 without credentials).
ENV CONSOLE_HOST=0.0.0.0 \
    CONSOLE_PORT=4000
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.CONSOLE_PORT||4000)+'/',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.status<500?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]
