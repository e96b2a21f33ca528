# Production image of the gateway: `node dist/main.js` against the environment's database and
# provider (no simulator, no embedded database). Multi-stage, runs as the non-root `node` user.
# Node 24 LTS: the same version .ci/run tests the whole suite on (NODE24_VERSION there).
#   docker build -t wallet-gateway .
#   docker build --target migrate -t wallet-gateway-migrate .   # applies prisma/migrations
#   docker run --rm -e DATABASE_URL=... wallet-gateway-migrate
#   docker run -e DATABASE_URL=... -e PROVIDER_BASE_URL=... -e PROVIDER_API_KEY=... \
#     -e PROVIDER_WEBHOOK_SECRET=... -e PUBLIC_BASE_URL=... -p 3000:3000 wallet-gateway
#   docker run --rm -e DATABASE_URL=... wallet-gateway node dist/cli/api-key.js create --name web --scopes all

FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
# Dependencies first, for layer caching. postinstall runs `prisma generate` (no download needed).
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
COPY tools ./tools
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
RUN npm run build

# Migrations need the Prisma CLI and the offline schema engine (dev dependencies).
FROM build AS migrate
CMD ["npm", "run", "db:migrate"]

FROM build AS prune
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:24.21.0-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=prune --chown=node:node /app/package.json ./package.json
COPY --from=prune --chown=node:node /app/node_modules ./node_modules
COPY --from=prune --chown=node:node /app/dist ./dist
# The finance page (/finance): static files read at start, next to dist/ (src/finance-page).
COPY --chown=node:node web ./web
USER node
EXPOSE 3000
# Stopping: on SIGTERM /health/ready answers 503 at once, the instance serves SHUTDOWN_DELAY_MS (10 s)
# more, then finishes in-flight requests (a provider call may take PROVIDER_TIMEOUT_MS, 10 s, with
# retries) and closes its pools last. Give it a grace period ≥ SHUTDOWN_DELAY_MS + 3 × PROVIDER_TIMEOUT_MS:
#   docker run --stop-timeout 45 …   compose: stop_grace_period: 45s   Kubernetes: terminationGracePeriodSeconds: 45
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/main.js"]
