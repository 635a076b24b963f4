#!/usr/bin/env bash
# The floor of full mode's cost on this host: a 1-byte dd loop with no tracer, with an empty program on
# raw_syscalls:sys_exit (what any payload capture at syscall exit attaches), with full mode's pid-map predicate
# alone, with the light program and with the full program. Interleaved; prints "<rep> <variant> <wall s> <user s> <sys s>".
# Run as root on a quiet node after `npm run build`: REPS=5 COUNT=1500000 bash bench/overhead-floor.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
node --input-type=module -e "
import { programText } from './dist/bpf/program.js';
import { writeFileSync } from 'node:fs';
writeFileSync('$dir/full.bt', programText('full', []));
writeFileSync('$dir/light.bt', programText('light', []));
writeFileSync('$dir/empty.bt', 'BEGIN { printf(\"ready\\\\n\"); }\ntracepoint:raw_syscalls:sys_exit { }\n');
writeFileSync('$dir/predicate.bt', 'BEGIN { @cni[1] = 1; printf(\"ready\\\\n\"); }\ntracepoint:raw_syscalls:sys_exit /@cni[pid]/ { @x[tid] = 1; }\n');
"
export BPFTRACE_STRLEN=200 BPFTRACE_MAP_KEYS_MAX=65536 BPFTRACE_PERF_RB_PAGES=1024
ddt() { /usr/bin/time -f "%e %U %S" nice -n -20 dd if=/dev/zero of=/dev/null bs=1 count="${COUNT:-1500000}" 2>&1 | tail -1; }
for rep in $(seq "${REPS:-5}"); do
  for v in ${VARIANTS:-none empty predicate light full}; do
    bp=
    if [ "$v" != none ]; then
      : >"$dir/$v.out"
      bpftrace "$dir/$v.bt" >"$dir/$v.out" 2>"$dir/$v.err" &
      bp=$!
      for _ in $(seq 300); do grep -q "^H \|^ready" "$dir/$v.out" && break; sleep 0.1; done
      sleep 0.5
    fi
    echo "$rep $v $(ddt)"
    if [ -n "$bp" ]; then kill -INT "$bp"; wait "$bp" 2>/dev/null || true; fi
  done
done
