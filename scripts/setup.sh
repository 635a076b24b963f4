#!/usr/bin/env bash
# Installs what cnirec needs on a Debian/Ubuntu node (run as root):
# bpftrace and the tools the end-to-end tests drive (reference CNI plugins,
# iproute2, iptables, podman with runc; systemd-analyze for the unit check),
# mounts tracefs, installs npm packages and builds. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: run as root (sudo bash scripts/setup.sh)" >&2
  exit 1
fi

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  echo "setup.sh: cnirec needs Node.js 20 or newer (found: $(node --version 2>/dev/null || echo none)); install it first." >&2
  exit 1
fi

packages=(bpftrace containernetworking-plugins iproute2 iptables podman runc busybox-static catatonit jq curl systemd)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! mountpoint -q /sys/kernel/tracing; then
  mount -t tracefs nodev /sys/kernel/tracing
fi

# `npm install` rather than `npm ci`: a lockfile written without registry addresses (as npm is set up
# here) has no entries for other platforms' optional packages (rollup's), which `npm ci` rejects as
# "missing from lock file". `npm install` installs exactly the locked versions all the same.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm install --no-audit --no-fund
fi
[ -f dist/cli/main.js ] || npm run build
echo "setup.sh: ready"
