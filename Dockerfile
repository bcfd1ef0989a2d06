# The service's image: `podman build -t partner-catalog-api .` (or `docker build`), then
# `podman run --read-only -p 3000:3000 partner-catalog-api` for the demo; docs/deployment.md says more.
# The base is an official Node.js LTS image; pass --build-arg NODE_IMAGE=... to build on another tag
# of it (a mirror of it, or the same line pinned by digest).
ARG NODE_IMAGE=node:22-bookworm-slim

# Compiles src/ to dist/ with every dependency, TypeScript included.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The client is a workspace of the root package: npm ci needs its package.json, not its sources.
COPY package.json package-lock.json ./
COPY client/package.json client/
# No install script is needed to compile (esbuild's checks a binary only tsx uses; @scarf/scarf's is denied).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
RUN npm run build

# The production dependencies alone, without the client workspace's link (the service never imports it).
FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json client/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/@partner-catalog \
 && npm cache clean --force

# What runs: dist/, the production node_modules, package.json (its "type": "module" makes dist/ ES
# modules) and catalogs/ (the demo catalog, read relative to dist/). Everything belongs to root and is
# only read, so the root filesystem can be mounted read-only: nothing is written at run time.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORTAL_HOST=0.0.0.0 \
    METRICS_HOST=0.0.0.0
WORKDIR /app
COPY package.json ./
COPY catalogs catalogs
COPY --from=production-dependencies /app/node_modules node_modules
COPY --from=build /app/dist dist
# Numeric, so that Kubernetes' runAsNonRoot can check it without a passwd entry.
USER 10001:10001
# The API, the partner portal, the metrics.
EXPOSE 3000 3001 9464
# node itself, in exec form: SIGTERM reaches the service, which drains and exits 0. The operator
# commands run in the same image: `podman run IMAGE node dist/cli.js migrate`.
CMD ["node", "dist/main.js"]
