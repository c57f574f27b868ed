# syntax=docker/dockerfile:1
# One image for every component; the component is the entry script given as the argument:
#   docker build -t switchboard:0.1.0 .
#   docker run switchboard:0.1.0                                   # the gateway
#   docker run switchboard:0.1.0 services/inventory/dist/main.js   # a service
# Without a registry, scripts/build-image.sh makes both bases locally and builds with Podman.
# NODE_IMAGE builds (Node and npm); RUNTIME_IMAGE runs (Node alone is enough).
ARG NODE_IMAGE=node:20.20.2-bookworm-slim
ARG RUNTIME_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV CI=true
# The workspace manifests alone first, so the dependency layer is rebuilt only when they change.
COPY package.json package-lock.json ./
COPY packages/proto/package.json packages/proto/
COPY packages/kit/package.json packages/kit/
COPY packages/sdk/package.json packages/sdk/
COPY packages/agent-smoke/package.json packages/agent-smoke/
COPY services/inventory/package.json services/inventory/
COPY services/call-control/package.json services/call-control/
COPY services/messaging/package.json services/messaging/
COPY services/usage/package.json services/usage/
COPY services/webhook/package.json services/webhook/
COPY gateway/package.json gateway/
COPY platform/package.json platform/
COPY bench/package.json bench/
COPY test/support/package.json test/support/
COPY test/smsc/package.json test/smsc/
# A CA bundle for the npm registry behind a TLS-intercepting proxy: a file the build mounts (see
# scripts/build-image.sh). Build stage only; the image does not keep it.
ARG NODE_EXTRA_CA_CERTS
# npm install, not npm ci: the lock file leaves out buf's and msgpackr's per-platform optional
# packages, which npm ci refuses (see .ci/run). Scripts run below, once the sources are here.
RUN npm install --no-audit --no-fund --ignore-scripts
COPY . .
# buf generate (the gRPC code) and tsc, then production dependencies only, then no sources. Then
# nothing Node never loads: declarations and source maps (a third of node_modules), and the
# OpenTelemetry packages' bundler builds (their exports' "esnext" and "module" conditions; Node
# takes "default", build/src). scripts/build-image.sh reports the size (goal: under 250 MB).
RUN npm run build \
  && npm prune --omit=dev --no-audit --no-fund \
  && rm -rf packages/*/src packages/*/test services/*/src services/*/test \
    gateway/src gateway/test platform/src platform/test \
  && find . -name '*.tsbuildinfo' -not -path './node_modules/*' -delete \
  && find . -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) \
    -delete \
  && rm -rf node_modules/@opentelemetry/*/build/esm node_modules/@opentelemetry/*/build/esnext

FROM ${RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only to the process; the chart also mounts the root filesystem read-only.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages ./packages
COPY --from=build /app/services ./services
COPY --from=build /app/gateway ./gateway
COPY --from=build /app/platform ./platform
# The node user of the base image, by number so runAsNonRoot can verify it.
USER 1000:1000
# Gateway HTTP, admin (metrics, health), the services' gRPC ports.
EXPOSE 8080 9090 50051-50055
# Exec form: node is PID 1 and receives SIGTERM itself (each process drains on it).
ENTRYPOINT ["node", "--import", "@switchboard/kit/telemetry/register"]
CMD ["gateway/dist/main.js"]
