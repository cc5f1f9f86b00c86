# syntax=docker/dockerfile:1
# Hooktrail: one image for every role (APP_ROLE=all, api or worker).

# ---- build: compile the service and the dashboard ----
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Install scripts are skipped (the `prepare` build needs the sources, copied next); argon2 ships prebuilt binaries.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build

# ---- runtime: production dependencies and the build only ----
FROM node:22-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
# dist/src (service, CLIs, migrations), dist/web (dashboard), dist/mikro-orm.config.js
COPY --from=build /app/dist ./dist
COPY scripts ./scripts
# `npx hooktrail` (the API client) inside the container, e.g. `docker compose exec hooktrail npx hooktrail endpoints list`
COPY bin ./bin
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["sh", "bin/hooktrail-server"]
