# The service image for docker-compose.yml: real ClickHouse, so the embedded engine (chdb,
# an optional dependency of ~540 MB) is left out.
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=optional --omit=dev --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
# the CLI as one JavaScript file (npm run cli starts it without compiling TypeScript)
COPY scripts/build-cli.mjs scripts/cli.mjs ./scripts/
RUN node scripts/build-cli.mjs
COPY postgres ./postgres
COPY clickhouse ./clickhouse
# the dashboard, served as files by the API (src/http/routes/web.ts)
COPY web ./web
# DATA_DIR holds the ingest spool (DATA_DIR/spool): a directory the unprivileged user owns, so
# that a volume mounted there (docker-compose.yml) starts out owned by it too.
RUN mkdir -p /data/spool && chown -R node:node /data
ENV HOST=0.0.0.0 PORT=3000 NODE_ENV=production DATA_DIR=/data
# glibc gives freed large buffers (request bodies, spool segments, insert blocks) back to the
# system instead of keeping them in its heap, and asks for transparent huge pages for those
# mappings (so a large buffer is not faulted in 4 KiB at a time), as `npm start` does
# (README, configuration)
ENV MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=1048576 GLIBC_TUNABLES=glibc.malloc.hugetlb=1
EXPOSE 3000
USER node
CMD ["node", "--max-semi-space-size=16", "--import", "tsx", "src/main.ts"]
