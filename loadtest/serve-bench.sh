#!/usr/bin/env bash
# serve-bench: folio-edge vs nginx serving the same cached page, gzip, keep-alive.
# Both servers pinned to CPU 0 (one worker/thread each), wrk pinned to CPU 1.
# Prints requests/s for each and the ratio; appends to loadtest/results/serve-bench.csv.
#   loadtest/serve-bench.sh [BUILD_DIR] [DURATION_S] [CONNECTIONS]
set -euo pipefail
BUILD=${1:-build}; DUR=${2:-10}; CONNS=${3:-64}
ROOT=$(cd "$(dirname "$0")/.." && pwd); BIN="$ROOT/$BUILD/bin"
for tool in wrk nginx nats-server curl taskset; do command -v $tool >/dev/null || { echo "missing $tool (FOLIO_BENCH_DEPS=1 scripts/install-deps.sh)"; exit 1; }; done
W=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
NP=$(free_port); MP=$(free_port); IP=$(free_port); EP=$(free_port); XP=$(free_port)
wait_http() { for _ in $(seq 1 200); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "timeout $1"; exit 1; }

nats-server -js -a 127.0.0.1 -p "$NP" -sd "$W/nats" -m "$MP" >"$W/nats.log" 2>&1 & pids+=($!)
wait_http "http://127.0.0.1:$MP/healthz?js-enabled-only=true" || { cat "$W/nats.log"; exit 1; }
taskset -c 1 "$BIN/folio-ingest" --listen 127.0.0.1:$IP --nats nats://127.0.0.1:$NP --data "$W/ingest" --token t >"$W/ingest.log" 2>&1 & pids+=($!)
taskset -c 0 "$BIN/folio-edge" --listen 127.0.0.1:$EP --nats nats://127.0.0.1:$NP --threads 1 >"$W/edge.log" 2>&1 & pids+=($!)
wait_http "http://127.0.0.1:$IP/readyz"; wait_http "http://127.0.0.1:$EP/readyz"

# A page whose gzip body is ~12 KB (the size of the nginx comparison in README's Benchmarks):
# seeded random prose, so it compresses like real text, not like a repeated line.
python3 - "$W/body.json" <<'PY'
import json, random, sys
rnd = random.Random(42)
words = ("note vault link page edge ingest render markdown server reader memory bytes gzip header "
         "cache stream bucket index graph backlink heading table list code block quote author site "
         "search storage journal commit publish replay watch update delete version token manifest "
         "the a of to in and for with on by from at as is are was be this that it").split()
def sentence():
    return " ".join(rnd.choice(words) for _ in range(rnd.randint(8, 18))).capitalize() + "."
paras = "\n\n".join(" ".join(sentence() for _ in range(5)) for _ in range(110))
json.dump({"notes": [{"path": "Bench page.md", "content": "# Bench page\n\n" + paras}]}, open(sys.argv[1], "w"))
PY
curl -fsS -H "Authorization: Bearer t" -H "Content-Type: application/json" --data-binary @"$W/body.json" \
  "http://127.0.0.1:$IP/api/v1/push" >/dev/null
for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$EP/bench-page" && break; sleep 0.05; done

# nginx serves the very same bytes (gzip_static) from a file, one worker.
mkdir -p "$W/www"
curl -fsS "http://127.0.0.1:$EP/bench-page" -o "$W/www/bench-page.html"
curl -fsS -H 'Accept-Encoding: gzip' "http://127.0.0.1:$EP/bench-page" -o "$W/www/bench-page.html.gz"
SIZE=$(stat -c %s "$W/www/bench-page.html"); GZ=$(stat -c %s "$W/www/bench-page.html.gz")
cat >"$W/nginx.conf" <<CONF
user root; worker_processes 1; daemon off; pid $W/nginx.pid; error_log $W/nginx.err;
events { worker_connections 4096; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 1000000; open_file_cache max=100;
  gzip_static on; gzip_vary on; types { text/html html; }
  server { listen 127.0.0.1:$XP; root $W/www; location / { try_files \$uri.html =404; } } }
CONF
taskset -c 0 nginx -c "$W/nginx.conf" -p "$W" & pids+=($!)
wait_http "http://127.0.0.1:$XP/bench-page"

run_wrk() { taskset -c 1 wrk -t1 -c"$CONNS" -d"${DUR}s" -H 'Accept-Encoding: gzip' "$1" | awk '/Requests\/sec/ {print $2}'; }
echo "page: $SIZE bytes, gzip $GZ bytes; $CONNS connections, ${DUR}s each, servers on CPU 0, wrk on CPU 1"
EDGE=$(run_wrk "http://127.0.0.1:$EP/bench-page"); NGINX=$(run_wrk "http://127.0.0.1:$XP/bench-page")
EDGE2=$(run_wrk "http://127.0.0.1:$EP/bench-page"); NGINX2=$(run_wrk "http://127.0.0.1:$XP/bench-page")
median() { printf '%s\n' "$@" | sort -g | head -1; }  # of two runs: report the lower (conservative)
E=$(median "$EDGE" "$EDGE2"); N=$(median "$NGINX" "$NGINX2")
RATIO=$(python3 -c "print(f'{$E/$N:.2f}')")
printf '%-12s %12s\n' server 'requests/s' folio-edge "$E" nginx "$N"
echo "edge/nginx: ${RATIO}x"
mkdir -p "$ROOT/loadtest/results"
[[ -f "$ROOT/loadtest/results/serve-bench.csv" ]] || echo "date,page_bytes,gzip_bytes,connections,edge_rps,nginx_rps,ratio" >"$ROOT/loadtest/results/serve-bench.csv"
echo "$(date -u +%F),$SIZE,$GZ,$CONNS,$E,$N,$RATIO" >>"$ROOT/loadtest/results/serve-bench.csv"
