# Shared by scripts/setup.sh and scripts/test.sh (sourced, not run).

require_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "$1: run as root (sudo bash scripts/$1)" >&2
    exit 1
  fi
}

# Node.js 22 or 24 (the LTS lines); 20 still runs it but reached end of life on 2026-04-30.
require_node() {
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -lt 20 ]; then
    echo "$1: cnirec needs Node.js 22 or 24 (found: $(node --version 2>/dev/null || echo none)); install it first." >&2
    exit 1
  fi
  if [ "$major" -lt 22 ]; then
    echo "$1: Node.js $(node --version) reached end of life; cnirec runs on it, but use Node.js 24 (or 22) where you can." >&2
  fi
}

# apt-get install of the packages not installed yet.
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
