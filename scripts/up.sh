#!/usr/bin/env bash
# Quick start: installs what is needed and brings the cnirec daemon up in the
# background, recording every CNI plugin call on this node from now on.
#   API and /healthz: http://127.0.0.1:7070   logs: /var/log/cnirec.log
#   stop: kill "$(cat /run/cnirec.pid)"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

listen=${CNIREC_LISTEN:-127.0.0.1:7070}
if [ -f /run/cnirec.pid ] && kill -0 "$(cat /run/cnirec.pid)" 2>/dev/null; then
  echo "cnirec is already running (pid $(cat /run/cnirec.pid)), API on http://$listen"
  exit 0
fi

# Through its shebang, which carries the daemon's V8 heap flags (see bin/cnirec.js).
nohup ./bin/cnirec.js run --listen "$listen" "$@" >>/var/log/cnirec.log 2>&1 &
echo $! >/run/cnirec.pid

for _ in $(seq 1 120); do
  if curl -fsS "http://$listen/healthz" 2>/dev/null | grep -q '"ready":true'; then
    echo "cnirec is recording (pid $(cat /run/cnirec.pid)); API on http://$listen, logs in /var/log/cnirec.log"
    echo "try: npm run demo"
    exit 0
  fi
  if ! kill -0 "$(cat /run/cnirec.pid)" 2>/dev/null; then
    echo "cnirec did not start:" >&2
    tail -n 5 /var/log/cnirec.log >&2
    exit 1
  fi
  sleep 0.5
done
echo "cnirec did not report ready within 60 s; see /var/log/cnirec.log" >&2
exit 1
