#!/usr/bin/env bash
# Installs what the cnirec daemon needs on a Debian/Ubuntu node (run as root): bpftrace, the reference CNI
# plugins and iproute2 (for `npm run demo`), curl (scripts/up.sh waits on /healthz with it); mounts tracefs;
# installs the locked npm packages and builds. Nothing only the tests need: scripts/test.sh adds that.
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

require_root setup.sh
require_node setup.sh
apt_install bpftrace containernetworking-plugins iproute2 curl

if ! mountpoint -q /sys/kernel/tracing; then
  mount -t tracefs nodev /sys/kernel/tracing
fi

# The lockfile lists every platform's optional packages, so `npm ci` installs exactly it and leaves
# package-lock.json as committed.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
# The daemon and its web view (dist/ui/) are both built by `npm run build`.
[ -f dist/cli/main.js ] && [ -f dist/ui/index.html ] || npm run build
echo "setup.sh: ready"
