# Shiri: one image for every role (api, worker, all). It runs the
# JavaScript `npm run build` compiles, with production dependencies only: no TypeScript at run
# time (tsx) and no embedded Postgres (both development dependencies).
# Node 24, one of the majors CI tests (package.json `engines`; .ci/run); scripts/production-tree.sh
# lays out what the last stage holds without Docker, and CI tests the compiled service from it.
# The carrier simulators are not in it (a development tool: docs/decisions/0010); docker-compose.yml
# builds the `simulator` stage for them.

# 1. Compile: every dependency, then dist/ (src/ and carriers/ as JavaScript, the migrations copied).
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.ts ./scripts/
COPY types ./types
COPY carriers ./carriers
COPY src ./src
RUN npm run build

# 2. The production dependencies alone (none of them has an install script).
FROM node:24-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# 3. The carrier simulators, for docker-compose.yml: run from the sources with every dependency
#    (tsx), as in development; never part of the production image below.
FROM build AS simulator
COPY bin ./bin
USER node
CMD ["node", "bin/shiri.mjs", "simulator"]

# 4. What runs: node, the production dependencies, bin/ and dist/.
FROM node:24-slim
# NODE_ENV=production makes bin/shiri.mjs run dist/; SHIRI_ENV=production refuses private callback
# addresses, starts no simulators and refuses to start without DATABASE_URL.
ENV NODE_ENV=production \
    SHIRI_ENV=production
WORKDIR /app
COPY package.json ./
COPY --from=dependencies /app/node_modules ./node_modules
COPY bin ./bin
COPY --from=build /app/dist ./dist
USER node

# The API (PORT) and Prometheus metrics (METRICS_PORT), src/config.ts's defaults. Each role answers
# GET /readyz on METRICS_PORT (the API also on PORT); docker-compose.yml's healthchecks use them.
EXPOSE 3000 9464
CMD ["node", "bin/shiri.mjs", "start"]
