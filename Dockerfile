# Shiri: one image for every role (api, worker, all) and the carrier simulator.
# TypeScript runs through tsx (a runtime dependency), so there is no build step.
FROM node:22-slim

ENV NODE_ENV=production
WORKDIR /app

COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY bin ./bin
COPY carriers ./carriers
COPY src ./src
COPY tsconfig.json ./

# DATA_DIR (.data) is only used without DATABASE_URL, by the embedded Postgres.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node

# The API (PORT) and Prometheus metrics (METRICS_PORT), src/config.ts's defaults.
EXPOSE 3000 9464
CMD ["node", "bin/shiri.mjs", "start"]
