#!/usr/bin/env bash
# serve-bench: folio-edge vs nginx serving the same site, 2,000 distinct pages of
# realistic size, gzip, keep-alive. The site is pushed to ingest, `folio export`
# writes it to a folder (pages plus .gz twins holding the edge's gzip bytes), and
# nginx (one worker, tuned: see its config below) serves that folder; every URL
# is checked to give the same bytes from both, gzip and identity.
# Both servers pinned to CPU 0 (one worker / --threads 1), wrk to CPU 1 with a Lua
# script cycling through every URL with Accept-Encoding: gzip.
# Reports requests/s, p50/p99 latency and the server's CPU microseconds per
# request (time on CPU of every thread, from /proc/PID/task/*/schedstat, in ns,
# before/after; nginx: master plus worker), at 50 and 200 connections, RUNS
# times alternating edge and nginx, then the medians and their ratio; appends
# every run to loadtest/results/serve-bench.csv.
#   loadtest/serve-bench.sh [BUILD_DIR] [DURATION_S] [RUNS]   (default: build 10 3)
# SERVE_BENCH_EDGE=PATH runs another folio-edge binary (before/after comparisons).
set -euo pipefail
BUILD=${1:-build}; DUR=${2:-10}; RUNS=${3:-3}; NOTES=${SERVE_BENCH_NOTES:-1900}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [[ "$BUILD" = /* ]]; then BIN="$BUILD/bin"; else BIN="$ROOT/$BUILD/bin"; fi
for tool in wrk nginx nats-server curl taskset python3; do
  command -v $tool >/dev/null || [[ -x /usr/sbin/$tool ]] || { echo "missing $tool (FOLIO_BENCH_DEPS=1 scripts/install-deps.sh)"; exit 1; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
for b in folio folio-ingest folio-edge; do [[ -x "$BIN/$b" ]] || { echo "missing $BIN/$b (cmake --build $BUILD)"; exit 1; }; done
EDGE_BIN=${SERVE_BENCH_EDGE:-$BIN/folio-edge}
W=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
NP=$(free_port); MP=$(free_port); IP=$(free_port); EP=$(free_port); XP=$(free_port)
wait_http() { for _ in $(seq 1 400); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "timeout $1"; exit 1; }

nats-server -js -a 127.0.0.1 -p "$NP" -sd "$W/nats" -m "$MP" >"$W/nats.log" 2>&1 & pids+=($!)
wait_http "http://127.0.0.1:$MP/healthz?js-enabled-only=true"
taskset -c 1 "$BIN/folio-ingest" --listen 127.0.0.1:$IP --nats nats://127.0.0.1:$NP --data "$W/ingest" --token t \
  >"$W/ingest.log" 2>&1 & pids+=($!)
taskset -c 0 "$EDGE_BIN" --listen 127.0.0.1:$EP --nats nats://127.0.0.1:$NP --threads 1 >"$W/edge.log" 2>&1 &
EDGE_PID=$!; pids+=($EDGE_PID)
wait_http "http://127.0.0.1:$IP/readyz"; wait_http "http://127.0.0.1:$EP/readyz"

# The vault: vaultgen's notes, each grown by seeded prose to a varied, realistic
# size (log-normal, median ~3 KB of markdown, a long tail up to ~60 KB).
python3 "$ROOT/loadtest/vaultgen.py" --notes "$NOTES" "$W/vault" >/dev/null
python3 - "$W/vault" <<'PY'
import os, random, sys
rnd = random.Random(7)
words = ("note vault link page edge render markdown server reader memory gzip header cache stream index "
         "graph heading table list code block quote author site search storage journal commit publish "
         "the a of to in and for with on by from at as is are was be this that it").split()
def para():
    return " ".join(" ".join(rnd.choice(words) for _ in range(rnd.randint(8, 18))).capitalize() + "."
                    for _ in range(rnd.randint(2, 6)))
for dirpath, _, files in sorted(os.walk(sys.argv[1])):
    for f in sorted(files):
        if not f.endswith(".md"): continue
        target = min(60000, int(rnd.lognormvariate(8.0, 0.9)))  # e^8 ~ 3 KB
        text, n = [], 0
        while n < target:
            p = para(); text.append(p); n += len(p) + 2
        with open(os.path.join(dirpath, f), "a") as out:
            out.write("\n\n## Notes\n\n" + "\n\n".join(text) + "\n")
PY
"$BIN/folio" push "$W/vault" --server http://127.0.0.1:$IP --token t >"$W/push.log" 2>&1 || { cat "$W/push.log"; exit 1; }

# The same site as files: export until the edge served every URL (it applies the push asynchronously).
for try in 1 2 3 4 5 6 7 8 9 10; do
  if "$BIN/folio" export "$W/www" --server http://127.0.0.1:$IP --token t --edge http://127.0.0.1:$EP --force \
      >"$W/export.log" 2>&1; then break; fi
  [[ $try == 10 ]] && { cat "$W/export.log"; exit 1; }; sleep 0.5
done
# Every exported URL but the 404 page, in a fixed shuffled order (percent-encoded for the request line).
python3 - "$W/www" "$W/urls.txt" <<'PY'
import os, random, sys, urllib.parse
root, urls = sys.argv[1], []
for dirpath, _, files in os.walk(root):
    for f in files:
        rel = os.path.relpath(os.path.join(dirpath, f), root)
        if rel.endswith(".gz") or rel.startswith("_folio/"): continue
        if rel == "index.html": u = "/"
        elif rel.endswith(("/index.html", "/index.json")): u = "/" + rel[:-len("index.html")]
        elif rel.endswith(".html"): u = "/" + rel[:-5]
        else: u = "/" + rel
        urls.append(urllib.parse.quote(u, safe="/"))
urls.sort(); random.Random(1).shuffle(urls)
open(sys.argv[2], "w").write("\n".join(urls) + "\n")
PY
PAGES=$(wc -l <"$W/urls.txt")
IDB=$(du -sb --exclude='*.gz' "$W/www" | cut -f1); GZB=$(find "$W/www" -name '*.gz' -printf '%s\n' | awk '{s+=$1} END {print s}')

# nginx as fast as we could make it serve these bytes (each variant measured on
# this bench, CPU per request; 2026-12-05):
# - try_files tries "$uri.html" first: nearly every URL is a page, so it is a
#   hit on the first probe. "$uri" first (as before) probed a missing file on
#   every page request.
# - open_file_cache_errors on: a failed probe ("/dir/.html" for a folder URL,
#   "$uri" for a page under the old order) is cached too; without it each one
#   is an openat() per request (orig: 6.0 syscalls a request, 12.0 us; with
#   both changes: 5.0, 9.4-9.8 us).
# - open_file_cache max=20000: every page, its .gz twin and the failed probes
#   fit (2,000 URLs, about three entries each); valid 60s outlasts a run.
# - sendfile on + tcp_nopush on: the head (writev) and the .gz body (sendfile)
#   leave as full segments; tcp_nopush costs two setsockopt(TCP_CORK) a
#   request but without it the head is a packet of its own: 11.3 us. sendfile
#   off (read into output_buffers, one writev): 10.9 us.
# - gzip_static on: the .gz twin, the edge's own gzip bytes, goes out as it is.
# - access_log off, one worker, keepalive_requests high: as the edge (no log
#   line per request, one core, connections never recycled by the server).
# - gzip_vary and etag on: the edge sends Vary and ETag too.
cat >"$W/nginx.conf" <<CONF
user root; worker_processes 1; daemon off; pid $W/nginx.pid; error_log $W/nginx.err;
events { worker_connections 4096; }
http { include /etc/nginx/mime.types; default_type application/octet-stream;
  access_log off; sendfile on; tcp_nopush on; keepalive_requests 1000000;
  open_file_cache max=20000 inactive=60s; open_file_cache_valid 60s; open_file_cache_errors on;
  gzip_static on; gzip_vary on; etag on;
  server { listen 127.0.0.1:$XP; root $W/www; error_page 404 /_folio/404.html;
    location / { try_files \$uri.html \$uri \$uri/index.html \$uri/index.json =404; } } }
CONF
taskset -c 0 "$NGINX" -c "$W/nginx.conf" -p "$W" & NGINX_PID=$!; pids+=($NGINX_PID)
wait_http "http://127.0.0.1:$XP/"

# Same bytes: every URL, gzip and identity, from both servers.
python3 - "$W/urls.txt" "$EP" "$XP" <<'PY' || exit 1
import http.client, sys
urls = open(sys.argv[1]).read().split()
conns = [http.client.HTTPConnection("127.0.0.1", int(p)) for p in sys.argv[2:4]]
def get(c, u, enc):
    c.request("GET", u, headers={"Accept-Encoding": enc}); r = c.getresponse(); return r.status, r.read()
for u in urls:
    for enc in ("gzip", "identity"):
        if get(conns[0], u, enc) != get(conns[1], u, enc): sys.exit(f"edge and nginx differ at {u} ({enc})")
PY

cat >"$W/cycle.lua" <<LUA
local urls, i = {}, 0
for line in io.lines("$W/urls.txt") do urls[#urls + 1] = line end
request = function() i = i % #urls + 1; return wrk.format("GET", urls[i]) end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d\n", summary.requests, latency:percentile(50), latency:percentile(99),
                         e.connect + e.read + e.write + e.status + e.timeout))
end
LUA
# ns on CPU of every thread of the given processes (clock ticks, 10 ms, were too coarse).
cpu_ns() { local t=0 ns f; for p in "$@"; do for f in /proc/$p/task/*/schedstat; do read -r ns _ <"$f"; t=$((t + ns)); done; done; echo $t; }
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown); DATE=$(date -u +%F)
CSV="$ROOT/loadtest/results/serve-bench.csv"; mkdir -p "$(dirname "$CSV")"
[[ -s "$CSV" ]] || echo "date,commit,server,pages,connections,duration_s,requests_per_s,p50_ms,p99_ms,cpu_us_per_req" >"$CSV"
declare -A CPU
run() {  # run SERVER PORT CONNS PID...
  local name=$1 port=$2 conns=$3; shift 3
  local before after out
  before=$(cpu_ns "$@")
  out=$(taskset -c 1 wrk -t1 -c"$conns" -d"${DUR}s" -H 'Accept-Encoding: gzip' -s "$W/cycle.lua" "http://127.0.0.1:$port" \
        | awk '/^RESULT/ {print $2, $3, $4, $5}')
  after=$(cpu_ns "$@")
  read -r reqs p50 p99 errors <<<"$out"
  [[ "$errors" == 0 ]] || { echo "$name: $errors errors (connect/read/write/non-2xx/timeout)"; exit 1; }
  python3 - "$name" "$conns" "$reqs" "$p50" "$p99" "$((after - before))" "$DUR" "$PAGES" "$DATE" "$COMMIT" "$CSV" <<'PY'
import sys
name, conns, reqs, p50, p99, ns, dur, pages, date, commit, csv = sys.argv[1:]
reqs, ns = int(reqs), int(ns)
rps = reqs / float(dur); cpu = ns / 1e3 / reqs
print(f"{name:<11} {conns:>5} {rps:>12,.0f} {int(p50)/1000:>8.2f} {int(p99)/1000:>8.2f} {cpu:>10.1f}")
open(csv, "a").write(f"{date},{commit},{name},{pages},{conns},{dur},{rps:.0f},{int(p50)/1000:.3f},{int(p99)/1000:.3f},{cpu:.2f}\n")
PY
}
echo "site: $PAGES URLs, $((IDB / 1024)) KiB identity, $((GZB / 1024)) KiB gzip; servers on CPU 0, wrk on CPU 1, ${DUR}s per run"
printf '%-11s %5s %12s %8s %8s %10s\n' server conns 'requests/s' 'p50 ms' 'p99 ms' 'cpu us/req'
NGINX_WORKER=$(pgrep -P "$NGINX_PID" | head -1)
for conns in 50 200; do
  for run in $(seq 1 "$RUNS"); do
    run folio-edge "$EP" "$conns" "$EDGE_PID" | tee -a "$W/edge.$conns"
    run nginx "$XP" "$conns" "$NGINX_PID" "$NGINX_WORKER" | tee -a "$W/nginx.$conns"
  done
  python3 - "$conns" "$W/edge.$conns" "$W/nginx.$conns" <<'PY'
import statistics, sys
med = [statistics.median(float(l.split()[5]) for l in open(f)) for f in sys.argv[2:4]]
print(f"medians at {sys.argv[1]} connections: edge {med[0]:.2f} us, nginx {med[1]:.2f} us: edge/nginx {med[0] / med[1]:.2f}x")
PY
done
