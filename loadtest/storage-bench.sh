#!/usr/bin/env bash
# storage-bench: folio-storage over HTTP next to what the disk itself does, measured in one
# run on the same disk (the directory below, on the repository's file system):
#   - fio: 4 KiB append + fdatasync latency (one writer), sequential 1 MiB writes (MB/s)
#   - folio-storage: 4 KiB PUT latency at 1 writer (p50/p99), PUT/s at 1, 8 and 64 writers,
#     1 MiB PUT throughput, write amplification (disk bytes / blob bytes), 4 KiB GET/s
# Needs fio and wrk (FOLIO_BENCH_DEPS=1 scripts/install-deps.sh). Requests carry a write
# token made for the run (storage checks every one). folio-storage runs on
# CPU 0, wrk on CPU 1. PUTs go to /objects/bench/... (the blob path is the same journal
# code plus the SHA-256 check, which wrk cannot compute per request).
#
#   loadtest/storage-bench.sh [BUILD_DIR] [SECONDS]     (defaults: build 5)
set -euo pipefail
BUILD=${1:-build}; SECS=${2:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd); cd "$ROOT"
for t in fio wrk curl python3; do command -v $t >/dev/null || { echo "missing $t (FOLIO_BENCH_DEPS=1 scripts/install-deps.sh)"; exit 1; }; done
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" --target folio-storage -j "$(nproc)" >/dev/null

WORK="$ROOT/run/storage-bench"; rm -rf "$WORK"; mkdir -p "$WORK"
LUA="$WORK/put.lua"
cat >"$LUA" <<'LUA'
local n = 0
local body = string.rep("x", tonumber(os.getenv("BODY_BYTES") or "4096"))
local next_tid = 0
function setup(thread) thread:set("tid", next_tid); next_tid = next_tid + 1 end
function request()
  n = n + 1
  return wrk.format("PUT", "/objects/bench/" .. os.getenv("PHASE") .. "/" .. tid .. "-" .. n, nil, body)
end
LUA
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT"
TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')  # storage's write token for this run
AUTH="Authorization: Bearer $TOKEN"
PID=""
start_storage() {  # fresh journal each phase, so write amplification is per workload
  [[ -n "$PID" ]] && { kill "$PID"; wait "$PID" 2>/dev/null || true; }
  rm -rf "$WORK/journal"
  FOLIO_WRITE_TOKEN="$TOKEN" FOLIO_READ_TOKEN="read-$TOKEN" taskset -c 0 "$BUILD/bin/folio-storage" \
    --listen "127.0.0.1:$PORT" --data "$WORK/journal" >"$WORK/storage.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 100); do curl -fsS -o /dev/null "$URL/readyz" 2>/dev/null && return; sleep 0.05; done
  echo "folio-storage did not start"; cat "$WORK/storage.log"; exit 1
}
trap '[[ -n "$PID" ]] && kill "$PID" 2>/dev/null; true' EXIT
metric() { curl -fsS "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
# wrk --latency output -> "p50_us p99_us rps"
cat >"$WORK/parse_wrk.py" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def us(s):
    v, u = re.match(r"([\d.]+)(\w+)", s).groups(); return float(v) * {"us": 1, "ms": 1e3, "s": 1e6}[u]
p = {m.group(1): us(m.group(2)) for m in re.finditer(r"^\s+(50|99)%\s+(\S+)", t, re.M)}
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
errs = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
print(f"{p.get('50', 0):.0f} {p.get('99', 0):.0f} {rps:.0f}" + (f" ERRORS={errs.group(1)}" if errs else ""))
PY
run_wrk() {  # phase conns threads body_bytes
  PHASE=$1 BODY_BYTES=$4 taskset -c 1 wrk -t"$3" -c"$2" -d"${SECS}s" --latency -H "$AUTH" -s "$LUA" "$URL" \
    >"$WORK/wrk-$1.txt"
  python3 "$WORK/parse_wrk.py" "$WORK/wrk-$1.txt"
}

echo "== $(nproc) CPUs; disk of $WORK: $(df -h "$WORK" | awk 'NR==2 {print $1, $2}')"
# fio: what one 4 KiB append + fdatasync costs on this disk, and sequential bandwidth.
fio --name=append --directory="$WORK" --rw=write --bs=4k --size=16m --ioengine=sync --fdatasync=1 \
    --output-format=json >"$WORK/fio-append.json" 2>/dev/null
fio --name=seq --directory="$WORK" --rw=write --bs=1m --size=512m --ioengine=sync --end_fsync=1 \
    --output-format=json >"$WORK/fio-seq.json" 2>/dev/null
read -r FIO_P50 FIO_P99 FIO_IOPS FIO_SEQ < <(python3 - "$WORK/fio-append.json" "$WORK/fio-seq.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["jobs"][0]; s = json.load(open(sys.argv[2]))["jobs"][0]
# One op = the write (page cache) + its fdatasync; fio reports them apart.
w = a["write"]["clat_ns"]["percentile"]; y = a["sync"]["lat_ns"]["percentile"]
p50 = (w["50.000000"] + y["50.000000"]) / 1e3; p99 = (w["99.000000"] + y["99.000000"]) / 1e3
print(f"{p50:.0f} {p99:.0f} {a['write']['iops']:.0f} {s['write']['bw'] / 1024:.0f}")
PY
)
rm -f "$WORK"/append.* "$WORK"/seq.*

start_storage
read -r P1_50 P1_99 P1_RPS _ < <(run_wrk w1 1 1 4096)
read -r _ _ P8_RPS _ < <(run_wrk w8 8 1 4096)
read -r P64_50 P64_99 P64_RPS _ < <(run_wrk w64 64 1 4096)
FSYNCS=$(metric folio_storage_fsyncs)
taskset -c 1 wrk -t1 -c64 -d"${SECS}s" --latency -H "$AUTH" "$URL/objects/bench/w1/0-1" >"$WORK/wrk-get.txt"
read -r G_50 G_99 G_RPS _ < <(python3 "$WORK/parse_wrk.py" "$WORK/wrk-get.txt")
PUTS=$(curl -fsS "$URL/metrics" | awk '$1 ~ /^folio_storage_requests_total/ && /op="put"/ {print $2}')
start_storage
read -r _ _ M_RPS _ < <(run_wrk mib 4 1 1048576)
WA_MIB=$(metric folio_storage_write_amplification)
start_storage
read -r _ _ K64_RPS _ < <(run_wrk k64 8 1 65536)
WA_64K=$(metric folio_storage_write_amplification)

RATIO=$(python3 -c "print(f'{$P1_50 / $FIO_P50:.2f}')")
cat <<TABLE

| measure | folio-storage | disk (fio, same run) |
|---|---:|---:|
| 4 KiB write, one writer, p50 / p99 | PUT ${P1_50} / ${P1_99} µs | append+fdatasync ${FIO_P50} / ${FIO_P99} µs |
| one-writer p50 ratio (target ≤ 1.2) | ${RATIO}× | 1.00× |
| 4 KiB PUT/s at 1 / 8 / 64 writers | ${P1_RPS} / ${P8_RPS} / ${P64_RPS} | ${FIO_IOPS} (1 writer) |
| 4 KiB PUT at 64 writers, p50 / p99 | ${P64_50} / ${P64_99} µs | |
| fdatasyncs for ${PUTS} PUTs (group commit) | ${FSYNCS} | |
| 1 MiB PUT throughput (4 writers) | ${M_RPS} MiB/s | sequential ${FIO_SEQ} MiB/s |
| write amplification, 1 MiB / 64 KiB blobs | ${WA_MIB} / ${WA_64K} | |
| 4 KiB GET/s (64 connections), p50 | ${G_RPS}, ${G_50} µs | |
TABLE
mkdir -p loadtest/results
CSV=loadtest/results/storage-bench.csv
[[ -f $CSV ]] || echo "date,fio_p50_us,fio_p99_us,fio_iops,fio_seq_mibs,put1_p50_us,put1_p99_us,put1_rps,put8_rps,put64_rps,put64_p50_us,put64_p99_us,fsyncs,puts,mib_put_mibs,wa_1mib,wa_64k,get_rps,get_p50_us" >"$CSV"
echo "$(date -u +%F),$FIO_P50,$FIO_P99,$FIO_IOPS,$FIO_SEQ,$P1_50,$P1_99,$P1_RPS,$P8_RPS,$P64_RPS,$P64_50,$P64_99,$FSYNCS,$PUTS,$M_RPS,$WA_MIB,$WA_64K,$G_RPS,$G_50" >>"$CSV"
rm -rf "$WORK/journal"
