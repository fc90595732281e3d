# gleaner: the server image. Multi-stage: the first stage installs the production dependencies,
# the second is Node 24 slim with Debian's Chromium and fonts, run as a non-root user.
#   docker build -t gleaner .
#   docker run -p 8080:8080 -v gleaner-data:/data gleaner
# NODE_IMAGE may point at any Debian-based image with Node 24 and npm in /usr/local (as the
# official image has), e.g. a mirror's copy where Docker Hub cannot be reached.
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only, from the lock. The "node" package (Node 24 for machines whose
# own Node is older) is removed: the image has Node 24 already, and it weighs ~190 MB.
RUN npm ci --omit=dev --no-audit --no-fund \
    && rm -rf node_modules/node node_modules/.bin/node \
    && npm cache clean --force

FROM ${NODE_IMAGE}
# Chromium for the browser pool (rendered pages, Google search); fonts so pages and PDFs render
# with real glyphs; tini as PID 1, so Chromium's exited children are reaped and signals reach Node.
# Versions come from the base image's Debian release and its security updates, so they are not
# pinned here: rebuilding picks up the fixes. Then the user the server runs as, and its /data.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends chromium fonts-dejavu-core fonts-liberation ca-certificates tini \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system gleaner \
    && useradd --system --gid gleaner --home-dir /app --shell /usr/sbin/nologin gleaner \
    && mkdir -p /data \
    && chown gleaner:gleaner /data

WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src

# SHUTDOWN_DRAIN_MS: on SIGTERM, /ready says 503 for 5 s while requests are still served, so a
# balancer checking /ready (compose.scaled.yaml's Caddy: every 2 s, 2 s timeout) stops sending
# new ones before the listener closes. A stop timeout must cover it plus SHUTDOWN_GRACE_MS.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    CHROMIUM_PATH=/usr/bin/chromium \
    SHUTDOWN_DRAIN_MS=5000

# The embedded database, its lock and the admin socket live here; PostgreSQL mode keeps nothing in it.
VOLUME ["/data"]
EXPOSE 8080
# Not root: the browser pool refuses to start as root unless BROWSER_SANDBOX=off. BROWSER_SANDBOX
# is left at auto: Chromium runs in its sandbox where the runtime's seccomp profile lets this user
# create user namespaces, and says at start when it cannot (docs/deployment.md).
USER gleaner

# /ready is 200 once the pools (PDF, OCR, browser) are up and 503 while starting, draining or stopping.
# The first start loads the OCR model and Chromium: give it time before failures count.
HEALTHCHECK --interval=15s --timeout=5s --start-period=90s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "bin/gleaner", "serve"]
