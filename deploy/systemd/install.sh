#!/usr/bin/env bash
# Installs cnirec as a systemd service on this node, from this checkout:
#   /opt/cnirec                      the built daemon with its runtime dependencies (the lockfile's versions)
#   /usr/local/bin/cnirec            the CLI (tail, calls, show, replay)
#   /etc/systemd/system/cnirec.service
#   /etc/default/cnirec              settings (CNIREC_* variables); an existing one is kept
# then enables and starts it and waits until it records. Run as root. Needs Node.js 22+ (24 LTS recommended), npm, bpftrace
# 0.17+ (Debian/Ubuntu: apt-get install -y bpftrace) and this checkout's dev dependencies (npm install)
# to build. Safe to run again (upgrades in place). Uninstall:
#   systemctl disable --now cnirec
#   rm -rf /opt/cnirec /usr/local/bin/cnirec /etc/systemd/system/cnirec.service /etc/default/cnirec
#   (the recorded calls stay in /var/lib/cnirec)
set -euo pipefail
cd "$(dirname "$0")/../.."
PREFIX=/opt/cnirec # the unit's ExecStart names it

fail() {
  echo "install.sh: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || fail "run as root (sudo bash deploy/systemd/install.sh)"
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$node_major" -ge 20 ] || fail "cnirec needs Node.js 22 or 24 (found: $(node --version 2>/dev/null || echo none))"
[ "$node_major" -ge 22 ] || echo "install.sh: Node.js $(node --version) reached end of life; cnirec runs on it, but use Node.js 24 (or 22) where you can" >&2
command -v bpftrace >/dev/null || fail "bpftrace was not found: apt-get install -y bpftrace (0.17 or newer)"
command -v systemctl >/dev/null || fail "systemctl was not found: this installs a systemd service"
[ -d node_modules ] || fail "run npm install in $(pwd) first (it builds the daemon)"

# Build here, then assemble the installation next to the old one and swap: a failed step leaves the
# running installation alone.
npm run build
staging="$PREFIX.new"
rm -rf "$staging"
mkdir -p "$staging/bpf"
cp -r package.json package-lock.json bin dist "$staging/"
cp bpf/cnirec.bt "$staging/bpf/"
(
  cd "$staging"
  npm pkg delete scripts # nothing to build there (prepare would look for the TypeScript compiler)
  npm install --omit=dev --no-audit --no-fund
)
"$staging/bin/cnirec.js" help >/dev/null
rm -rf "$PREFIX.old"
if [ -d "$PREFIX" ]; then mv "$PREFIX" "$PREFIX.old"; fi
mv "$staging" "$PREFIX"
rm -rf "$PREFIX.old"
ln -sfn "$PREFIX/bin/cnirec.js" /usr/local/bin/cnirec

install -m 0644 deploy/systemd/cnirec.service /etc/systemd/system/cnirec.service
[ -e /etc/default/cnirec ] || install -m 0600 deploy/systemd/cnirec.env /etc/default/cnirec
systemctl daemon-reload
systemctl enable cnirec.service
systemctl restart cnirec.service

listen=$( (set -a; . /etc/default/cnirec; echo "${CNIREC_LISTEN:-127.0.0.1:7070}") )
case "$listen" in 0.0.0.0:*) probe="127.0.0.1:${listen##*:}" ;; *) probe=$listen ;; esac
for _ in $(seq 1 120); do
  if curl -fsS "http://$probe/healthz?probe=readiness" >/dev/null 2>&1; then
    echo "cnirec is recording; API on http://$listen (journalctl -u cnirec for its logs)"
    exit 0
  fi
  systemctl is-active --quiet cnirec.service || fail "cnirec did not start: journalctl -u cnirec -n 20"
  sleep 0.5
done
fail "cnirec did not report ready within 60 s: journalctl -u cnirec -n 20"
