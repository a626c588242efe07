#!/usr/bin/env bash
# view-bench: what counting page views (services/edge/view_counter.h) costs the
# edge's hot path. One note page (~3 KB of markdown), gzip, keep-alive, read by
# wrk with a browser's User-Agent and Sec-Fetch-Dest: document, so every request
# is a counted view. Two edge binaries, BEFORE (without the counter) and AFTER,
# each pinned to CPU 0 with --threads 1 (wrk on CPU 1), RUNS alternating runs of
# DURATION_S at 50 connections; prints requests/s and the edge's CPU us/request
# per run and the medians.
#   loadtest/view-bench.sh BEFORE_EDGE [BUILD_DIR] [DURATION_S] [RUNS]   (default: build 10 3)
set -euo pipefail
BEFORE=$1; BUILD=${2:-build}; DUR=${3:-10}; RUNS=${4:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [[ "$BUILD" = /* ]]; then BIN="$BUILD/bin"; else BIN="$ROOT/$BUILD/bin"; fi
for tool in wrk nats-server curl taskset python3; do command -v $tool >/dev/null || { echo "missing $tool"; exit 1; }; done
W=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
NP=$(free_port); MP=$(free_port); IP=$(free_port)
wait_http() { for _ in $(seq 1 400); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "timeout $1"; exit 1; }
nats-server -js -a 127.0.0.1 -p "$NP" -sd "$W/nats" -m "$MP" >"$W/nats.log" 2>&1 & pids+=($!)
wait_http "http://127.0.0.1:$MP/healthz?js-enabled-only=true"
taskset -c 1 "$BIN/folio-ingest" --listen 127.0.0.1:$IP --nats nats://127.0.0.1:$NP --data "$W/ingest" --token t \
  >"$W/ingest.log" 2>&1 & pids+=($!)
wait_http "http://127.0.0.1:$IP/readyz"
mkdir -p "$W/vault"
python3 - "$W/vault/Page.md" <<'PY'
import random, sys
rnd = random.Random(7)
words = "note vault link page edge render markdown server reader memory gzip header cache the a of to in and".split()
paras = [" ".join(rnd.choice(words) for _ in range(60)).capitalize() + "." for _ in range(8)]
open(sys.argv[1], "w").write("# Page\n\n" + "\n\n".join(paras) + "\n")
PY
"$BIN/folio" push "$W/vault" --server http://127.0.0.1:$IP --token t >"$W/push.log" 2>&1 || { cat "$W/push.log"; exit 1; }
cpu_ns() { local t=0 ns f; for f in /proc/$1/task/*/schedstat; do read -r ns _ <"$f"; t=$((t + ns)); done; echo $t; }
run() {  # run NAME BINARY
  local port pid before after out
  port=$(free_port)
  taskset -c 0 "$2" --listen 127.0.0.1:$port --nats nats://127.0.0.1:$NP --threads 1 >>"$W/edge-$1.log" 2>&1 &
  pid=$!
  wait_http "http://127.0.0.1:$port/readyz"
  for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/page" 2>/dev/null && break; sleep 0.05; done
  before=$(cpu_ns $pid)
  out=$(taskset -c 1 wrk -t1 -c50 -d"${DUR}s" -H 'Accept-Encoding: gzip' -H 'Sec-Fetch-Dest: document' \
        -H 'User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' "http://127.0.0.1:$port/page")
  after=$(cpu_ns $pid)
  local views; views=$(curl -fsS "http://127.0.0.1:$port/metrics" | awk '/^folio_edge_page_views_total/ {print $2}')
  kill $pid; wait $pid 2>/dev/null || true
  local reqs; reqs=$(awk '/requests in/ {print $1}' <<<"$out")
  python3 -c "import sys; n=int(sys.argv[2]); print(f'{sys.argv[1]:<7} {n/float(sys.argv[4]):>12,.0f} {int(sys.argv[3])/1e3/n:>10.2f}  views counted: {sys.argv[5] or \"-\"}')" \
    "$1" "$reqs" "$((after - before))" "$DUR" "$views" | tee -a "$W/results"
}
printf '%-7s %12s %10s\n' edge 'requests/s' 'cpu us/req'
for i in $(seq 1 "$RUNS"); do run before "$BEFORE"; run after "$BIN/folio-edge"; done
python3 - "$W/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for name in ("before", "after"):
    rps = [float(r[1].replace(",", "")) for r in rows if r[0] == name]
    cpu = [float(r[2]) for r in rows if r[0] == name]
    print(f"median {name:<7} {statistics.median(rps):>12,.0f} req/s {statistics.median(cpu):>8.2f} cpu us/req")
PY
