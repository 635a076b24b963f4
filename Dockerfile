# cnirec node daemon image: Node.js 24 LTS (Debian 12's own nodejs is 18) with Debian 12's bpftrace (0.17).
# Runs as the DaemonSet in deploy/kubernetes/ expects: privileged, hostPID, entrypoint `cnirec run`,
# configured by flags or CNIREC_* variables.
#
#   docker build -t cnirec:0.1.0 .

# ---- build: compile the TypeScript, then keep only the runtime dependencies ----------------------------
FROM node:24-bookworm-slim AS build
# better-sqlite3 downloads a prebuilt addon, and compiles one with these when it cannot.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
# Scripts are skipped here because `prepare` builds sources not copied yet; better-sqlite3's own install
# script runs through the rebuild.
RUN npm ci --no-audit --no-fund --ignore-scripts \
 && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY lib ./lib
COPY bpf ./bpf
COPY collector ./collector
COPY store ./store
COPY otel ./otel
COPY api ./api
COPY daemon ./daemon
COPY cli ./cli
# The web view: its sources and the script that bundles them into dist/ui/ (npm run build runs it).
COPY ui ./ui
COPY scripts/build-ui.mjs ./scripts/build-ui.mjs
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---- runtime --------------------------------------------------------------------------------------------
FROM node:24-bookworm-slim
# bpftrace 0.17 and what it loads (LLVM, libbpf, bcc); mount, for mounting tracefs when the node has not.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bpftrace mount \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/cnirec
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY bin ./bin
COPY bpf/cnirec.bt ./bpf/cnirec.bt
RUN ln -s /opt/cnirec/bin/cnirec.js /usr/local/bin/cnirec
# Root: loading BPF programs needs it (the DaemonSet runs the container privileged).
USER root
# The database goes to the hostPath the DaemonSet mounts at /var/lib/cnirec.
ENV CNIREC_DB=/var/lib/cnirec/cnirec.db
EXPOSE 7070
ENTRYPOINT ["cnirec", "run"]
