#!/usr/bin/env bash
# The whole test suite, as CI runs it (run as root): what the daemon needs (scripts/setup.sh), then what
# only the tests drive — podman on the CNI backend with runc, busybox and catatonit for its containers,
# iptables for its networks, nftables (nft, a shell plugin's helper in the changes tests), jq, systemd-analyze for the unit check, perl (threads) for an exec from a thread,
# Debian's Chromium for the web view's browser tests (driven by playwright-core, which never downloads a browser),
# Prometheus (promtool unit-tests the alert rules; a real Prometheus scrapes a daemon in the alerts e2e),
# containerd (its CRI plugin, with runc) for the runtime's side, started by the tests on a private socket
# — then `npm test` (type-check, lint,
# build, unit, integration and the privileged end-to-end suites). Extra arguments go to vitest.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

require_root test.sh
bash scripts/setup.sh
apt_install podman runc busybox-static catatonit iptables nftables jq systemd perl chromium prometheus containerd
if [ "$#" -gt 0 ]; then
  npm test -- "$@"
else
  npm test
fi
