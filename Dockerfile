# Build stage: install everything, compile TypeScript, then drop dev dependencies.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bin ./bin
# `npm ci` compiles (prepare); the tests' client runtime (postinstall) is not in the build context and is skipped.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

# Runtime stage: compiled code and production dependencies only, as a non-root user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    MEMORY_SERVICE_HOST=0.0.0.0 \
    MEMORY_SERVICE_PORT=8787 \
    MEMORY_SERVICE_DATA_DIR=/var/lib/memory-service/data \
    MEMORY_SERVICE_OAUTH_AS_INI_FILE=/var/lib/memory-service/state/oauth-as.ini
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY application.ini.example ./
# Data (PGlite, when no DatabaseUrl) and the authorization server's state live outside /app, on volumes.
RUN mkdir -p /var/lib/memory-service/data /var/lib/memory-service/state \
  && chown -R node:node /var/lib/memory-service \
  && chmod 700 /var/lib/memory-service/state
USER node
VOLUME ["/var/lib/memory-service/data", "/var/lib/memory-service/state"]
EXPOSE 8787
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (docker stop) drains in-flight requests before the process exits.
STOPSIGNAL SIGTERM
CMD ["node", "bin/memory-service.js", "serve"]
